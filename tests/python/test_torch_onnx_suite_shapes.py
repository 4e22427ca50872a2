"""More of torch.onnx's own ONNX Runtime tests (issue 43): writes, lists and dims on dynamic axes, dynamic_axes
keys meant for torch.onnx's names, and errors torch.onnx raises. Named after the suite's methods; run by the
harness in torch_onnx_suite.py (the suite's run_test, the export routed to torch2onnx.export).
"""
import io
from typing import Tuple

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor

import torch2onnx
from torch2onnx import verification
from torch_onnx_suite import REFERENCE, Suite, classes, export

torchvision = pytest.importorskip("torchvision")


@torch.jit.script
def check_init(input_data: Tensor, hidden_size: int, prev_state: Tensor) -> Tuple[Tensor, Tensor]:
    batch_size = input_data.size(0)
    spatial_size_0 = input_data.size(2)
    spatial_size_1 = input_data.size(3)
    state_size = (2, batch_size, hidden_size, spatial_size_0, spatial_size_1)
    state = torch.zeros(state_size, device=input_data.device)
    state_copy = torch.zeros(state_size, device=input_data.device)
    if prev_state.size(0) == 0:
        for i in range(2):
            state[:] = torch.ones(batch_size, hidden_size, spatial_size_0, spatial_size_1) * i
            state_copy[:] = torch.ones(batch_size, hidden_size, spatial_size_0, spatial_size_1) * i
    elif prev_state.size(0) == 1:
        s = state[:]
        state[:] = prev_state + s
    elif prev_state.size(0) == 2:
        state[:] = torch.ones(batch_size, hidden_size, spatial_size_0, spatial_size_1) * 4
    return state, state_copy


class IndexPutIf(torch.nn.Module):
    def __init__(self, hidden_size=10):
        super().__init__()
        self.hidden_size = hidden_size

    def forward(self, input_data, prev_state):
        prev_state = check_init(input_data, self.hidden_size, prev_state)
        return prev_state[0], prev_state[1]


@classes()
def test_index_put_if_2(kind, keep):
    """A slice write in a branch the example does not take: its sizes are only known at run time."""
    data, empty = torch.rand(1, 5, 30, 30), torch.tensor([], dtype=torch.float).view(0, 0, 0, 0, 0)
    suite = Suite(kind, keep)
    suite.run_test(IndexPutIf(), (data, empty), input_names=["data", "state"],
                   dynamic_axes={"data": [0, 1, 2], "state": [0, 1, 2, 3, 4]},
                   additional_test_inputs=[(data, torch.rand(1, 1, 10, 30, 30))])
    suite.run_test(IndexPutIf(), (data, empty), input_names=["data", "state"],
                   dynamic_axes={"state": [0, 1, 2, 3, 4]}, additional_test_inputs=[(data, torch.rand(1, 1, 10, 30, 30))],
                   remained_onnx_input_idx=[1])
    suite.run_test(IndexPutIf(), (data, empty), remained_onnx_input_idx=[])


@classes()
def test_dynamic_expand_as(kind, keep):
    """x[:, n:] = tensor: the trace's broadcast of the right side to the example's sizes is not kept."""
    class Zero(torch.nn.Module):
        def forward(self, x):
            x[:, x.size(0):] = 0
            return x

    class Values(torch.nn.Module):
        def forward(self, x):
            x[:, x.size(0):] = torch.tensor([1, 2, 3])
            return x
    suite = Suite(kind, keep)
    suite.run_test(Zero(), (torch.ones(2, 5),), input_names=["x"], dynamic_axes={"x": [0, 1]},
                   additional_test_inputs=[(torch.randn(3, 4),)])
    suite.run_test(Values(), (torch.ones(2, 5, 3),), input_names=["x"], dynamic_axes={"x": [0, 1, 2]},
                   additional_test_inputs=[(torch.randn(3, 4, 3),)])


@classes(trace=False)
def test_len(kind, keep):
    """unbind along a dynamic axis: as many pieces as the run has (a sequence)."""
    class LenModel(torch.jit.ScriptModule):
        @torch.jit.script_method
        def forward(self, input):
            return len(input.unbind()) + input
    Suite(kind, keep).run_test(LenModel(), torch.randn(4, 5), input_names=["input"],
                               dynamic_axes={"input": {0: "seq"}}, additional_test_inputs=[torch.randn(5, 5)])


@classes(trace=False)
def test_list(kind, keep):
    """The result folds to a constant, but x stays an input: it enters lists, ONNX sequences in torch.onnx."""
    class ListModel(torch.jit.ScriptModule):
        @torch.jit.script_method
        def forward(self, x):
            tensors = x.unbind()
            res = []
            res.append(tensors[0])
            res.append(tensors[1])
            res.pop(1)
            res.insert(0, tensors[1])
            res.append(tensors[2])
            res += [tensors[3], tensors[4]]
            res = res + [tensors[5]]
            return torch.ones(len(res))
    Suite(kind, keep).run_test(ListModel(), torch.randn(16, 1))


@classes(script=False)
def test_slice_dynamic_to_end(kind, keep):
    """dynamic_axes keys for names torch.onnx would choose ("output_1" names nothing there): ignored, a warning."""
    class DynamicSliceExportMod(torch.nn.Module):
        def forward(self, x):
            results = []
            for i in range(4):
                results.append(x[:, i:, x.size(2) - 5])
            return tuple(results)
    Suite(kind, keep).run_test(DynamicSliceExportMod(), torch.rand(5, 5, 5),
                               dynamic_axes={"input_1": [0, 1, 2], "output_1": [0, 1, 2]})


@classes(trace=False)
def test_dim_1(kind, keep):
    """boxes.dim() on a loop's element: the same at every iteration, known at export time."""
    class M(torch.jit.ScriptModule):
        @torch.jit.script_method
        def forward(self, poses):
            boxes = torch.zeros([poses.shape[0], 2, 4])
            batch_boxes = []
            for kp_boxes in boxes:
                kp_boxes = torchvision.ops.clip_boxes_to_image(kp_boxes, (2, 3))
                batch_boxes.append(kp_boxes)
            return batch_boxes
    Suite(kind, keep).run_test(M(), (torch.rand(2, 2, 3),), input_names=["x"], dynamic_axes={"x": [0]})


def test_errors_are_torch_onnx_errors():
    """Code written for torch.onnx catches torch.onnx.errors.OnnxExporterError (test_grid_sample's 5-D case)."""
    class GridSample(torch.nn.Module):
        def forward(self, x, grid):
            return F.grid_sample(x, grid, align_corners=False)
    x, grid = torch.randn(1, 1, 2, 3, 2), torch.randn(1, 3, 2, 2, 3)
    with pytest.raises(torch.onnx.errors.OnnxExporterError):
        export(GridSample(), (x, grid), io.BytesIO(), opset_version=16)


def test_interpolate_adaptive_pooling_error():
    """torch.onnx refuses adaptive pooling to a size that does not divide the input's (the suite expects its
    RuntimeError); torch2onnx exports it (one window per output element) and matches PyTorch."""
    if REFERENCE:
        pytest.skip("torch.onnx raises here")
    for mode, x, size in (("area", torch.randn(1, 2, 7), 4), ("area", torch.randn(1, 2, 7), 5)):
        class Pool(torch.nn.Module):
            def forward(self, x):
                return F.interpolate(x, size=size, mode=mode)
        f = io.BytesIO()
        torch2onnx.export(Pool(), (x,), f, opset_version=17)
        actual = verification.ort_session(f.getvalue()).run(None, {"x": x.numpy()})[0]
        torch.testing.assert_close(torch.from_numpy(actual), Pool()(x))
