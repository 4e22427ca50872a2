"""The module tree torch2onnx traces into is made in C++ (_C.module_tree,
issue 39), not by torch.jit.trace's Python: the traced graph must be the one
torch.jit.trace records, and the modules torch.jit.trace treats otherwise
must still be traced by it."""
import re

import pytest
import torch

from torch2onnx import _args, _C


def _graph(module):
    """forward()'s graph with every call inlined, value numbers and mangled class names made canonical."""
    g = module._get_method("forward").graph.copy()
    torch._C._jit_pass_inline(g)
    text = re.sub(r"___torch_mangle_\d+\.", "", str(g))
    ids = {}
    return re.sub(r"%(\d+)\b", lambda m: "%v" + str(ids.setdefault(m.group(1), len(ids))), text)


def _both(model, *inputs):
    reference = torch.jit.trace(model, inputs, strict=False, check_trace=False)._c
    ours = _args._trace_module(model, inputs)
    return reference, ours


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.scale = torch.nn.Parameter(torch.tensor(0.5))
        self.register_buffer("bias", torch.randn(4, 1, 1))

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x))) * self.scale + self.bias


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(Block(), torch.nn.Identity())
        self.head = torch.nn.Linear(4, 2)
        self.unused = torch.nn.Linear(1, 1)
        self.absent = None

    def forward(self, x):
        y = self.blocks(x).mean((2, 3))
        return self.head(y), y.shape[0]


@pytest.mark.parametrize("make", [
    lambda: (Net().eval(), torch.randn(2, 3, 8, 8)),
    lambda: (torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 3)), torch.randn(5, 4)),
    lambda: (torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval(), torch.randn(2, 5, 16)),
    lambda: (torch.nn.LSTM(4, 6, num_layers=2), torch.randn(3, 2, 4)),
], ids=["net", "mlp", "encoder_layer", "lstm"])
def test_same_graph_as_torch_jit_trace(make):
    model, x = make()
    with torch.no_grad():
        reference, ours = _both(model, x)
    assert _graph(ours) == _graph(reference)
    # the tree holds the model's own tensors (what the trace reads them as), in the same places
    wrap = torch.jit._recursive.wrap_cpp_module
    ours_state, reference_state = wrap(ours).state_dict(keep_vars=True), wrap(reference).state_dict(keep_vars=True)
    assert list(ours_state) == list(reference_state)
    for name, t in ours_state.items():
        assert t.data_ptr() == reference_state[name].data_ptr(), name


def test_a_scripted_child_is_kept_as_it_is():
    class WithScripted(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = torch.jit.script(torch.nn.Linear(3, 3))

        def forward(self, x):
            return self.inner(x).relu()

    model = WithScripted()
    with torch.no_grad():
        reference, ours = _both(model, torch.randn(2, 3))
    assert _graph(ours) == _graph(reference)


@pytest.mark.skipif("fbgemm" not in torch.backends.quantized.supported_engines, reason="no fbgemm")
def test_script_object_attributes_are_carried():
    """A dynamically quantized Linear reads its packed weights, a torch.classes object held in a module's
    __dict__: the tree carries it (torch.jit.trace's TracedModule does the same)."""
    model = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(torch.nn.Linear(4, 4)), {torch.nn.Linear})
    with torch.no_grad():
        reference, ours = _both(model, torch.randn(2, 4))
    assert _graph(ours) == _graph(reference)


def test_modules_torch_jit_trace_treats_otherwise_are_left_to_it():
    class Exported(torch.nn.Linear):
        @torch.jit.export
        def extra(self, x):
            return x + 1

    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(3))
            self.b = self.a

        def forward(self, x):
            return x * self.a + self.b

    hooked = torch.nn.Linear(2, 2)
    hooked.register_full_backward_hook(lambda *a: None)
    assert _C.module_tree(torch.nn.Sequential(Exported(2, 2))) is None
    assert _C.module_tree(Tied()) is None
    assert _C.module_tree(torch.nn.Sequential(hooked)) is None
    # and the trace then is torch.jit.trace's, with its own errors
    with pytest.raises(ValueError, match="parameter sharing"):
        _args._trace_module(Tied(), (torch.randn(3),))
    ours = _args._trace_module(torch.nn.Sequential(Exported(2, 2)), (torch.randn(1, 2),))
    assert ours._has_method("forward")


def test_the_callers_trace_module_map_is_restored():
    before = torch.jit._trace._trace_module_map
    _args._trace_module(torch.nn.Linear(2, 2), (torch.randn(1, 2),))
    assert torch.jit._trace._trace_module_map is before
