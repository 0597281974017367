"""A small PyTorch encoder trained for a few seconds on PARITY at n <= 20 (docs/torch.md).

    PYTHONPATH=python /usr/bin/python3 -m attnprop_torch import python/examples/parity.py --out parity.json

build() trains the model (fixed seed, one thread: the same weights on every run of the same
PyTorch build) and returns import_model's keyword arguments: the module itself, whose forward
computes its sinusoidal positions from the length. The model reads x_1 .. x_{n-1} followed by
eos ("$"), and predicts at the eos position whether the number of 1s is odd: a softmax over
["0", "1"], "1" meaning "in PARITY" (attnprop's convention for --language parity).

Run as a script it also prints the training accuracy per length.
"""
import random

import torch
import torch.nn as nn

ALPHABET = ["0", "1"]
EOS = "$"
D_MODEL, HEADS, FFN, LAYERS = 16, 2, 32, 2
MAX_N = 20          # training lengths n = 2 .. 20 (eos included)
STEPS, BATCH = 400, 64
SEED = 7


class Parity(nn.Module):
    """Token embedding + sinusoids -> nn.TransformerEncoder -> nn.Linear at the last position."""

    def __init__(self):
        super().__init__()
        self.token = nn.Embedding(len(ALPHABET) + 1, D_MODEL)
        layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, dim_feedforward=FFN, dropout=0.0,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, norm=nn.LayerNorm(D_MODEL))
        self.readout = nn.Linear(D_MODEL, 2)

    def forward(self, ids):
        if ids.dim() == 1:  # one sequence, as attnprop_torch calls it: (n,) -> logits (2,)
            return self.forward(ids.unsqueeze(0))[0]
        n = ids.shape[1]
        pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)
        k2 = torch.arange(D_MODEL) - torch.arange(D_MODEL) % 2
        arg = pos / torch.pow(10000.0, k2.float() / D_MODEL)
        pe = torch.where(torch.arange(D_MODEL) % 2 == 0, torch.sin(arg), torch.cos(arg))
        x = self.encoder(self.token(ids) + pe)
        return self.readout(x[:, -1])


def batch(rng, n):
    """BATCH random strings of length n - 1 with eos, and their PARITY labels."""
    rows, labels = [], []
    for _ in range(BATCH):
        bits = [rng.randrange(2) for _ in range(n - 1)]
        rows.append(bits + [len(ALPHABET)])
        labels.append(sum(bits) % 2)
    return torch.tensor(rows), torch.tensor(labels)


def train():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    rng = random.Random(SEED)
    model = Parity()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(STEPS):
        ids, y = batch(rng, rng.randrange(2, MAX_N + 1))
        loss = nn.functional.cross_entropy(model(ids), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    return model


def build():
    model = train()
    return dict(module=model, alphabet=ALPHABET, eos=EOS, readout="logits", name="torch-parity",
                description="A 2-layer PyTorch encoder (d_model 16, 2 heads, gelu) trained for a "
                            "few seconds on PARITY at n <= 20 (python/examples/parity.py).")


if __name__ == "__main__":
    model = train()
    rng = random.Random(SEED + 1)
    with torch.no_grad():
        for n in (2, 5, 10, 20, 40):
            ids, y = batch(rng, n)
            acc = (model(ids).argmax(-1) == y).float().mean().item()
            print("n = %2d: accuracy %.2f" % (n, acc))
