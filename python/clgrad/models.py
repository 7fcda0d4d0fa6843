"""clgrad.models: the C library's built-in models (frontend/clgrad_models.h, the ones `clgrad train
--model` runs) as clgrad.nn Modules, and text generation with the gpt model's KV cache and GPT-2
weights (clgrad_generate.h, what `clgrad generate` runs).

    gpt = clgrad.models.gpt("tiny", device="pocl")      # or build("transformer", vocab=65, ...)
    opt = clgrad.optim.AdamW(gpt.parameters(), lr=3e-4)  # its tensors are the C model's own
    logits = gpt(ids)                                    # ids (B, T) int32 -> (B * T, vocab)
    out = gpt.generate(prompt_ids, max_new_tokens=100, temperature=0.8, top_k=40, seed=1)
"""

from . import _C
from ._tensor import Tensor, _index
from .nn import Module, Parameter

__all__ = ["BuiltinModel", "build", "gpt", "gpt_preset", "is_language_model", "gfnet_block", "load_checkpoint",
           "read_checkpoint_meta", "read_checkpoint_tokenizer", "NAMES"]

NAMES = ("mlp", "cnn", "transformer", "gpt", "gfnet")


def gpt_preset(name):
    """The sizes of a gpt preset ("tiny", "gpt2-small", "gpt2-medium") as a dict."""
    return _C.gpt_preset(str(name))


def is_language_model(name):
    """Whether the built-in model takes token ids (transformer, gpt) rather than images."""
    return _C.model_is_lm(str(name))


def gfnet_block(x, params):
    """One spectral block of the gfnet model on tokens x (B, H, W, D), a function of its 9
    parameters (layer norm 1 weight, bias; the complex filter (D, H, W/2+1, 2); layer norm 2 weight,
    bias; fc1 weight (4D, D), bias; fc2 weight (D, 4D), bias). Differentiable."""
    return _C.gfnet_block(x, list(params))


class BuiltinModel(Module):
    """A built-in model of the C library as a Module: its parameters and buffers are the C model's
    own tensors (state_dict names as `clgrad train --save` writes them, without "model."), so the
    clgrad optimizers train it and load_state_dict fills it; forward is the C model's."""

    def __init__(self, c, name):
        super().__init__()
        object.__setattr__(self, "_c", c)
        object.__setattr__(self, "name", name)
        self._refresh()

    def _refresh(self):
        self._parameters.clear()
        self._buffers.clear()
        for name, t, is_param in self._c.state():
            if is_param:
                self._parameters[name] = Tensor.__new__(Parameter, t)  # the very tensor, not a copy
            else:
                self._buffers[name] = t

    def forward(self, x):
        return self._c.forward(x)

    def train(self, mode=True):
        self._c.train(bool(mode))
        object.__setattr__(self, "training", bool(mode))
        return self

    def to(self, device=None, dtype=None):
        """Moves every tensor to device (the C model's clg_module_to: new tensors, so make the
        optimizer afterwards); the built-in models keep float32 (dtype other than it raises)."""
        if dtype is not None and getattr(dtype, "name", dtype) != "float32":
            raise NotImplementedError("BuiltinModel.to: the built-in models are float32")
        if device is not None:
            self._c.to(_index(device))
            self._refresh()
        return self

    def num_params(self):
        return self._c.num_params()

    def load_gpt2(self, path):
        """GPT-2's own safetensors (Hugging Face's GPT2Model / GPT2LMHeadModel) into a gpt model of
        the file's sizes (gpt(\"gpt2-small\")); all or nothing."""
        self._c.gpt2(str(path), False)

    def save_gpt2(self, path):
        self._c.gpt2(str(path), True)

    def load_checkpoint(self, path):
        """Parameters and buffers from a `clgrad train --save` checkpoint of this model's sizes."""
        self._c.ckpt_load(str(path))

    def save_checkpoint(self, path, tokenizer=None, epochs_done=0, seed=0):
        """A checkpoint in `clgrad train --save`'s format (the model's configuration in its
        metadata; a language model's tokenizer with it), which `clgrad generate --checkpoint` and
        `clgrad eval` read; written atomically. No optimizer state."""
        self._c.ckpt_save(str(path), None if tokenizer is None else tokenizer._c, int(epochs_done), int(seed))

    def kv_cache(self, batch=1, max_len=0):
        """A gpt model's KV cache for batch sequences of up to max_len positions (0: the context):
        cache.forward(ids (B, T) int32) gives the logits (B * T, vocab) of the T positions after
        those it holds; cache.len(), cache.reset()."""
        return self._c.kv_cache(int(batch), int(max_len))

    def generate(self, prompt, max_new_tokens=100, temperature=1.0, top_k=0, top_p=1.0, seed=0, stop_ids=(),
                 stop=(), tokenizer=None, on_token=None, context=0, use_cache=True):
        """The ids generated after prompt (a list of ids; a str with tokenizer=): greedy at
        temperature 0, else sampled (top_k, top_p) from seed's host stream (the same ids on every
        device); ends after max_new_tokens, a token of stop_ids, a string of stop (needs the
        tokenizer) or on_token(id) returning true. The gpt model runs with its KV cache unless
        use_cache=False; others need context (their sequence length). The model is left in
        evaluation mode."""
        if isinstance(prompt, str):
            if tokenizer is None:
                raise ValueError("generate: a str prompt needs the tokenizer (tokenizer=)")
            prompt = tokenizer.encode(prompt)
        stop = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in ([stop] if isinstance(stop, str)
                                                                             else stop)]
        ids = self._c.generate(list(prompt), int(max_new_tokens), float(temperature), int(top_k), float(top_p),
                               int(seed), list(stop_ids), stop, None if tokenizer is None else tokenizer._c,
                               on_token, int(context), not use_cache)
        object.__setattr__(self, "training", False)
        return ids


def build(name, device=None, seed=0, vocab=None, seq_len=None, dim=None, heads=None, layers=None, dropout=None,
          recompute=False):
    """The built-in model `name` (mlp, cnn, transformer, gpt, gfnet) on device, initialised from
    seed; sizes default to `clgrad train`'s."""
    d = _C.model_defaults()
    given = dict(vocab=vocab, seq_len=seq_len, dim=dim, heads=heads, layers=layers, dropout=dropout)
    d.update({k: v for k, v in given.items() if v is not None})
    c = _C.model_build(str(name), _index(device), int(d["vocab"]), int(d["seq_len"]), int(d["dim"]), int(d["heads"]),
                       int(d["layers"]), float(d["dropout"]), bool(recompute), int(seed))
    return BuiltinModel(c, str(name))


def gpt(preset="tiny", device=None, seed=0, dropout=0.0, recompute=False):
    """The gpt model of a preset's sizes (gpt_preset)."""
    p = gpt_preset(preset)
    return build("gpt", device, seed, p["vocab"], p["seq_len"], p["dim"], p["heads"], p["layers"], dropout, recompute)


def read_checkpoint_meta(path):
    """The metadata of a `clgrad train --save` checkpoint as a dict: the model and its sizes, the
    epochs done, the optimizer and schedule, the training text's fingerprint ("data") and path."""
    return _C.ckpt_read_meta(str(path))


def read_checkpoint_tokenizer(path):
    """A language model checkpoint's tokenizer (clgrad.text.Tokenizer), or None where it holds none."""
    from .text import Tokenizer
    c = _C.ckpt_read_tokenizer(str(path))
    return None if c is None else Tokenizer._wrap(c)


def load_checkpoint(path, device=None):
    """The built-in model a `clgrad train --save` checkpoint holds, built from its metadata and
    loaded; .tokenizer is its tokenizer (language models) or None, .checkpoint_meta its metadata."""
    meta = read_checkpoint_meta(path)
    m = BuiltinModel(_C.ckpt_model(str(path), _index(device)), meta["model"])
    object.__setattr__(m, "tokenizer", read_checkpoint_tokenizer(path))
    object.__setattr__(m, "checkpoint_meta", meta)
    return m
