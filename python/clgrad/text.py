"""clgrad.text: the C library's tokenizers and texts for language models (frontend/clgrad_tokenizer.h,
clgrad_data.h), the ones `clgrad train --model transformer --data FILE --tokenizer ...` uses.

    tok = clgrad.text.Tokenizer.bpe(open("book.txt", "rb").read(), vocab_size=512)
    ids = tok.encode("Hello")              # a list of ids; tok.decode(ids) == "Hello"
    text = clgrad.text.Text("book.txt", tokenizer=tok)   # or tokenizer="chars" / "bytes" / "bpe:512"
    train = text.windows(seq_len=64)       # a clgrad.data.Dataset of next-token windows

Texts are bytes: str arguments are encoded as UTF-8, and decode returns str (bytes that are not
UTF-8, say a BPE token cut inside a character, become U+FFFD; decode_bytes keeps them)."""

from . import _C
from .data import Dataset

__all__ = ["Tokenizer", "Text", "read_text", "text_hash", "fingerprint"]


def _bytes(s, what):
    if isinstance(s, str):
        return s.encode("utf-8")
    if isinstance(s, (bytes, bytearray, memoryview)):
        return bytes(s)
    raise TypeError("%s: expected str or bytes, got %s" % (what, type(s).__name__))


class Tokenizer:
    """A tokenizer of the C library: "bytes" (256 ids), "chars" (the sorted byte set of a text) or
    byte-level BPE learned from a text (GPT-2's word split). Tokenizer(spec, text=None) as
    `--tokenizer` takes it: "bytes", "chars", "bpe:N" (both learned from text) or a file's path."""

    __slots__ = ("_c",)

    def __init__(self, spec="bytes", text=None):
        self._c = _C.tokenizer_from_spec(str(spec), None if text is None else _bytes(text, "Tokenizer(text)"))

    @classmethod
    def _wrap(cls, c):
        t = cls.__new__(cls)
        t._c = c
        return t

    @classmethod
    def bytes(cls):
        return cls._wrap(_C.tokenizer_bytes())

    @classmethod
    def chars(cls, text):
        return cls._wrap(_C.tokenizer_chars(_bytes(text, "Tokenizer.chars")))

    @classmethod
    def bpe(cls, text, vocab_size):
        """BPE learned from text until vocab_size tokens (256 bytes + merges; fewer when no pair
        repeats)."""
        return cls._wrap(_C.tokenizer_bpe(_bytes(text, "Tokenizer.bpe"), int(vocab_size)))

    @classmethod
    def from_string(cls, s):
        """From the serialised form to_string() gives (a checkpoint's metadata)."""
        return cls._wrap(_C.tokenizer_from_string(str(s)))

    @classmethod
    def load(cls, path):
        return cls._wrap(_C.tokenizer_load(str(path)))

    @property
    def kind(self):
        return self._c.kind

    @property
    def vocab_size(self):
        return self._c.vocab_size

    def __len__(self):
        return self._c.vocab_size

    def encode(self, text):
        return self._c.encode(_bytes(text, "encode"))

    def decode(self, ids):
        return self._c.decode(list(ids)).decode("utf-8", "replace")

    def decode_bytes(self, ids):
        return self._c.decode(list(ids))

    def token(self, id):  # noqa: A002
        """The bytes of one token."""
        return self._c.token(int(id))

    def covers(self, text):
        """True when every byte of text can be encoded (chars: the byte set)."""
        return self._c.covers(_bytes(text, "covers")) < 0

    def uncovered(self, text):
        """The position of the first byte of text that cannot be encoded, or None."""
        p = self._c.covers(_bytes(text, "uncovered"))
        return None if p < 0 else p

    def to_string(self):
        return self._c.to_string()

    def save(self, path):
        """The serialised form as a file, written atomically."""
        self._c.save(str(path))

    def copy(self):
        return Tokenizer._wrap(self._c.clone())

    def __eq__(self, other):
        return isinstance(other, Tokenizer) and self._c.equal(other._c)

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return "Tokenizer(%s)" % self._c.describe()


def read_text(path):
    """The bytes of a file, or of a folder's texts joined in name order (fortune files as their
    fortunes), as the C library reads a training text."""
    return _C.text_read(str(path))


def text_hash(data):
    """FNV-1a (64 bits) of the bytes: with the length, a text's fingerprint in checkpoints."""
    return _C.text_hash(_bytes(data, "text_hash"))


def fingerprint(data):
    """A text's fingerprint as a checkpoint's "data" metadata holds it: "bytes=N fnv1a64=HEX"."""
    b = _bytes(data, "fingerprint")
    return _C.ckpt_fingerprint(len(b), _C.text_hash(b))


class Text:
    """A text read and encoded by the C library: Text(path, val_fraction=0.1, tokenizer="chars"),
    tokenizer a Tokenizer or a spec ("bytes", "chars", "bpe:N" learned from the training part, a
    file). The last val_fraction of its bytes is the validation part, encoded separately."""

    def __init__(self, path, val_fraction=0.1, tokenizer="chars"):
        if isinstance(tokenizer, Tokenizer):
            self._c = _C.text_load(str(path), float(val_fraction), tokenizer._c, None)
        else:
            self._c = _C.text_load(str(path), float(val_fraction), None, None if tokenizer is None else str(tokenizer))
        i = self._c.info()
        self.vocab_size, self.n, self.n_train = i["vocab_size"], i["n"], i["n_train"]
        self.bytes, self.bytes_train, self.hash = i["bytes"], i["bytes_train"], i["hash"]

    def __len__(self):
        return self.n

    @property
    def ids(self):
        """The encoded text, an int32 numpy array (a copy)."""
        import numpy as np
        return np.frombuffer(self._c.ids(), dtype=np.int32).copy()

    @property
    def tokenizer(self):
        return Tokenizer._wrap(self._c.tokenizer())

    def encode(self, text):
        return self.tokenizer.encode(text)

    def decode(self, ids):
        return self.tokenizer.decode(ids)

    def windows(self, seq_len, stride=None, train=True):
        """Next-token windows over the training (or validation) part as a clgrad.data.Dataset:
        sample i is ids[i stride : i stride + seq_len] and its label the ids one further
        (stride: seq_len unless given, as `clgrad train` takes them)."""
        return Dataset(self._c.windows(not train, int(seq_len), int(stride or seq_len)))
