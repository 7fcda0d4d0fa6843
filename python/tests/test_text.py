"""clgrad.text (the C tokenizers and texts) and clgrad.data.TextDataset: round trips of every
tokenizer kind, the chars ids against numpy's sorted byte set, the windows against slices of the
ids, the serialised forms. Host side: runs once, not per device."""
import numpy as np
import pytest

import clgrad
from clgrad.text import Text, Tokenizer

BODY = ("It was the best of times, it was the worst of times; " * 30 + "naïve café, 1234 ok\n").encode()


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes(BODY)
    return p


def test_tokenizer_kinds_round_trip():
    for tok in (Tokenizer.bytes(), Tokenizer.chars(BODY), Tokenizer.bpe(BODY, 320), Tokenizer("bpe:300", BODY)):
        ids = tok.encode(BODY)
        assert all(0 <= i < tok.vocab_size for i in ids) and len(ids) <= len(BODY)
        assert tok.decode_bytes(ids) == BODY and tok.decode(ids) == BODY.decode()
        assert b"".join(tok.token(i) for i in ids) == BODY
        assert Tokenizer.from_string(tok.to_string()) == tok and tok.copy() == tok
    assert Tokenizer.bytes().encode(b"\x00\xff") == [0, 255] and Tokenizer.bytes().vocab_size == 256
    bpe = Tokenizer.bpe(BODY, 320)
    assert bpe.kind == "bpe" and 256 < bpe.vocab_size <= 320 and len(bpe.encode(BODY)) < len(BODY) / 2
    chars = Tokenizer.chars(BODY)
    vocab = sorted(set(BODY))
    assert chars.kind == "chars" and chars.vocab_size == len(vocab)
    assert chars.encode(b"times") == [vocab.index(b) for b in b"times"]
    assert chars.covers("best") and not chars.covers("xyz!") and chars.uncovered("tx") == 1
    with pytest.raises(ValueError, match="vocabulary"):
        chars.encode("Q")
    assert chars != bpe and "chars of" in repr(chars)


def test_tokenizer_save_load(tmp_path):
    tok = Tokenizer.bpe(BODY, 300)
    tok.save(tmp_path / "tok")
    assert Tokenizer.load(tmp_path / "tok") == tok
    assert Tokenizer(str(tmp_path / "tok")) == tok  # a file as a spec, as --tokenizer takes it
    with pytest.raises(clgrad.FormatError):
        Tokenizer.from_string("clgrad-tokenizer-1 nonsense")
    with pytest.raises(TypeError, match="str or bytes"):
        tok.encode(5)


def test_text_and_windows(path):
    t = Text(path, val_fraction=0.25)
    vocab = sorted(set(BODY))
    ids = t.ids
    np.testing.assert_array_equal(ids, [vocab.index(b) for b in BODY])  # chars of the whole text, in order
    assert (t.vocab_size, t.n, t.bytes) == (len(vocab), len(BODY), len(BODY))
    assert t.n_train == t.bytes_train and abs(t.bytes_train - 0.75 * len(BODY)) <= 1  # chars: a token a byte
    assert t.hash == clgrad.text.text_hash(BODY) and clgrad.text.read_text(path) == BODY
    assert t.decode(ids[:6]) == BODY[:6].decode()
    for train, lo, hi in ((True, 0, t.n_train), (False, t.n_train, t.n)):
        ds = t.windows(16, stride=5, train=train)
        part = ids[lo:hi]
        assert len(ds) == (len(part) - 17) // 5 + 1 and ds.num_classes == t.vocab_size
        x, y = next(iter(clgrad.data.DataLoader(ds, batch_size=3, device="ref")))
        for i in range(3):
            np.testing.assert_array_equal(x.numpy()[i], part[i * 5:i * 5 + 16])
            np.testing.assert_array_equal(y.numpy()[i], part[i * 5 + 1:i * 5 + 17])
    assert len(clgrad.data.TextDataset(path, 16, train=False, val_fraction=0.25)) == len(t.windows(16, train=False))


def test_text_with_a_tokenizer(path):
    tok = Tokenizer.bpe(BODY, 300)
    t = Text(path, 0.1, tok)
    assert t.tokenizer == tok and t.vocab_size == tok.vocab_size
    n_train = t.n_train
    train_bytes = BODY[:t.bytes_train]
    np.testing.assert_array_equal(t.ids[:n_train], tok.encode(train_bytes))  # the parts encoded separately
    assert Text(path, 0.1, "bytes").vocab_size == 256
    with pytest.raises(ValueError, match="vocabulary"):  # a chars tokenizer of another text
        Text(path, 0.1, Tokenizer.chars(b"abc"))
    with pytest.raises(clgrad.Error):
        Text(str(path) + ".missing")
