"""Scripted models that use TorchScript class instances (torchvision's
ImageList, BoxCoder, LevelMapper) and assign module attributes in branches
(src/torch_passes/scalarize_objects.cpp, lift_parameters.cpp): attribute
reads become the values assigned, and the objects go away."""
import os
import sys
from typing import List, Optional

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
OPSETS = (11, 17)


@torch.jit.script
class Batch:
    """A tensor and its sizes, as torchvision's ImageList."""

    def __init__(self, tensors: torch.Tensor, sizes: List[int]):
        self.tensors = tensors
        self.sizes = sizes

    def scaled(self, k: float) -> torch.Tensor:
        return self.tensors * k + self.sizes[0]


@torch.jit.script
class Coder:
    """Weights kept in a plain object, as torchvision's BoxCoder."""

    def __init__(self, weights: List[float]):
        self.weights = weights

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weights[0] - self.weights[1]


def make_batch(x: torch.Tensor):
    return Batch(x, [x.size(0), x.size(1)]), x.sum()


class UsesObject(torch.nn.Module):
    def forward(self, x):
        b = Batch(x + 1, [x.size(0), x.size(1)])
        b.tensors = b.tensors.relu()  # reassigned, then read
        return b.scaled(2.0) + b.sizes[1]


class ObjectFromHelper(torch.nn.Module):
    """The object comes back from an inlined function inside a tuple."""

    def forward(self, x):
        b, s = make_batch(x)
        return b.tensors - s


class ObjectAttribute(torch.nn.Module):
    """An object held by a submodule, read in forward()."""

    def __init__(self):
        super().__init__()
        self.coder = Coder([2.0, 0.5])

    def forward(self, x):
        return self.coder.encode(x)


class LazyAttribute(torch.nn.Module):
    """Module attributes set on the first call (torchvision's
    MultiScaleRoIAlign sets its scales and LevelMapper so)."""

    def __init__(self):
        super().__init__()
        self.scales: Optional[List[float]] = None
        self.coder: Optional[Coder] = None

    def forward(self, x):
        if self.scales is None or self.coder is None:
            self.scales = [0.5, 0.25]
            self.coder = Coder([3.0, float(x.size(1))])
        coder = self.coder
        scales = self.scales
        assert coder is not None and scales is not None
        return coder.encode(x) * scales[0]


class AssignedInBranch(torch.nn.Module):
    """A module attribute assigned in a data-dependent branch: the If
    carries it out. (Every call assigns it first, so PyTorch's result does
    not depend on earlier calls.)"""

    def __init__(self):
        super().__init__()
        self.offset = torch.zeros(3)
        self.scale = torch.ones(3)

    def forward(self, x):
        self.offset = x + 1
        if x.sum() > 0:
            self.offset = x * 2
            self.scale = x.abs()
        else:
            self.scale = x - 1
        return x + self.offset * self.scale


class ReturnsObject(torch.nn.Module):
    def forward(self, x):
        return Batch(x, [1]), x


class AssignsInLoop(torch.nn.Module):
    """A module attribute assigned in a loop: the Loop carries it, read in
    the body and after it. (Every call assigns it first, so PyTorch's result
    does not depend on earlier calls.)"""

    def __init__(self):
        super().__init__()
        self.acc = torch.zeros(3)
        self.steps = torch.zeros(())

    def forward(self, x, n: int):
        self.acc = x * 0
        self.steps = x.sum() * 0
        for i in range(n):
            self.acc = self.acc + x * i
            if i > 1:
                self.steps = self.steps + 1
        return self.acc, self.steps


def called_once(module, *args):
    module(*args)
    return module


x = torch.randn(3, 4)
CASES = [
    Case("object_in_forward", UsesObject(), (x,), opsets=OPSETS, script=True),
    Case("object_from_helper", ObjectFromHelper(), (x,), opsets=OPSETS, script=True),
    Case("object_attribute", ObjectAttribute(), (x,), opsets=OPSETS, script=True),
    Case("lazy_attribute", LazyAttribute(), (x,), opsets=OPSETS, script=True),
    # called once before scripting: the attributes hold a list and a Coder,
    # which the export rebuilds (the branch that would set them folds away)
    Case("lazy_attribute_set", called_once(LazyAttribute(), x), (x,), opsets=OPSETS, script=True),
    Case("attribute_assigned_in_branch", AssignedInBranch(), (torch.randn(3),), opsets=OPSETS, script=True,
         more_args=[(-torch.ones(3),), (torch.ones(3),)]),
    Case("object_returned", ReturnsObject(), (x,), opsets=(), script=True,
         error_below={17: "an object of class Batch is passed to prim::TupleConstruct, which cannot be exported"}),
    # (issue 43: was refused)
    Case("attribute_assigned_in_loop", AssignsInLoop(), (torch.randn(3), 2), opsets=OPSETS, script=True,
         more_args=[(torch.randn(3), 0), (torch.randn(3), 5)]),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
