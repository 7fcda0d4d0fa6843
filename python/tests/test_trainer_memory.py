"""Trainer.memory_estimate (clg_train_memory_estimate): the parameter, gradient and optimizer bytes
of the configuration's model and optimizer, the language models' activations."""
import clgrad
import clgrad.nn as nn


def test_memory_estimate():
    m = nn.Sequential(nn.Linear(784, 100), nn.ReLU(), nn.Linear(100, 10))
    n = sum(p.numel() for p in m.parameters())
    for opt, slots in (("adam", 2), ("sgd", 0)):
        e = clgrad.Trainer(m, epochs=1, progress=False, optimizer=opt, devices=["ref"]).memory_estimate()
        assert e["params"] == e["grads"] == 4 * n and e["optim"] == slots * 4 * n
        assert e["activations"] == 0 and not e["exact"]
        assert e["total"] == e["params"] + e["grads"] + e["optim"]
    t = clgrad.Trainer("transformer", epochs=1, progress=False, dim=64, heads=4, layers=2, seq_len=32, vocab=50,
                       devices=["ref"])
    e, half = t.memory_estimate(), t.memory_estimate(rows=64)
    assert e["exact"] and e["activations"] > e["activations_recompute"] > 0 and e["largest_what"]
    assert e["params"] == 4 * clgrad.models.build("transformer", "ref", dim=64, heads=4, layers=2, seq_len=32,
                                                  vocab=50).num_params()
    assert 0 < half["activations"] < e["activations"]  # a micro-batch of 64 rows of the 128
