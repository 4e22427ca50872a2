"""Writes the .pt2 archives of this folder with the torch that runs it (and
what they must compute), so that the CLI's .pt2 reader is tested on archives
other torch versions wrote:

    <venv with torch 2.X>/bin/python tests/cli/data/pt2/make_archives.py

For each model: <model>_torch<version>.pt2 (torch.export.save) and
<model>_torch<version>.npz (inputs at several batch sizes, the model's
outputs on them: in<k>_<case>, out<k>_<case>)."""
import os

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x))).mean((2, 3))
        return self.fc(y) * x.shape[0], y.view(x.shape[0], 2, 4)


class Cond(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.cond(x.mean() > 0, lambda x: self.fc(x).relu(), lambda x: x.cos() * 2, (x,))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)

    def forward(self, x):
        return self.layer(x)


def main():
    torch.manual_seed(0)
    version = torch.__version__.split("+")[0]
    batch = torch.export.Dim("batch", min=1, max=64)
    seq = torch.export.Dim("seq", min=1, max=64)
    models = {
        "net": (Net(), lambda b: (torch.randn(b, 3, 12, 12),), {"x": {0: batch}}, (2, 1, 5)),
        "cond": (Cond(), lambda b: ((1 if b % 2 else -1) * (torch.rand(b, 4) + 0.1),), {"x": {0: batch}}, (3, 1, 4)),
        "encoder": (Encoder(), lambda b: (torch.randn(b, b + 3, 16),), {"x": {0: batch, 1: seq}}, (2, 1, 3)),
    }
    for name, (module, make, shapes, batches) in models.items():
        module.eval()
        ep = torch.export.export(module, make(batches[0]), dynamic_shapes=shapes)
        torch.export.save(ep, os.path.join(HERE, f"{name}_torch{version}.pt2"))
        arrays = {}
        for case, b in enumerate(batches):
            args = make(b)
            with torch.no_grad():
                outs = module(*args)
            outs = outs if isinstance(outs, tuple) else (outs,)
            for k, a in enumerate(args):
                arrays[f"in{k}_{case}"] = a.numpy()
            for k, o in enumerate(outs):
                arrays[f"out{k}_{case}"] = o.numpy()
        np.savez(os.path.join(HERE, f"{name}_torch{version}.npz"), **arrays)
        print(name, version, "written")


if __name__ == "__main__":
    main()
