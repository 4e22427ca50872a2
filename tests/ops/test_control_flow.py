"""Scripted control flow (src/convert/converter.cpp: prim::If -> If, prim::Loop
-> Loop): each case runs in ONNX Runtime at several inputs taking different
branches and trip counts, compared with PyTorch."""
import os
import sys
from collections import OrderedDict
from typing import Dict, List, Optional

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
OPSETS = (11, 13, 17)


class DataIf(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
        return y


class NestedIf(torch.nn.Module):
    def forward(self, x):
        if x.mean() > 0:
            if x.max() > 1.5:
                y = x * 3
            else:
                y = x + 10
        else:
            y = -x
        return y + 1


class IfWithInts(torch.nn.Module):
    """Branches returning different dtypes are unified to PyTorch's."""

    def forward(self, x):
        n = x.size(0)
        if bool(x[0, 0] > 0):
            k = n * 2
        else:
            k = n + 7
        return x * k


class ForLoop(torch.nn.Module):
    def forward(self, x, n):
        for i in range(int(n)):
            x = x + i
        return x


class WhileLoop(torch.nn.Module):
    def forward(self, x):
        i = 0
        while bool(x.sum() < 100.0) and i < 50:
            x = x * 2 + 1
            i += 1
        return x, i


class CapturedInLoop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x, n):
        scale = x.abs().mean()
        for _ in range(int(n)):
            x = torch.tanh(x @ self.w) * scale
        return x


class LoopInIf(torch.nn.Module):
    def forward(self, x, n):
        if x.sum() > 0:
            for i in range(int(n)):
                x = x * 0.5 + i
        else:
            x = x - 1
        return x


class IfInLoop(torch.nn.Module):
    def forward(self, x, n):
        for i in range(int(n)):
            if i % 2 == 0:
                x = x + 1
            else:
                x = x * 2
        return x


class PrimitiveInputs(torch.nn.Module):
    def forward(self, x, n: int, s: float, flag: bool):
        y = x * s
        if flag:
            y = y + n
        for _ in range(n):
            y = y * 0.5
        return y


class Training(torch.nn.Module):
    """`if self.training` folds away at eval."""

    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(4)

    def forward(self, x):
        if self.training:
            return self.bn(x) * 0
        return self.bn(x) + 1


class ListInLoop(torch.nn.Module):
    """A list of run-time length: ONNX sequences (opset 11+)."""

    def forward(self, x, n):
        res: List[torch.Tensor] = []
        for i in range(int(n)):
            res.append(x * i)
        return torch.stack(res), len(res), res[-1], torch.cat(res, 1)


class ConditionalAppend(torch.nn.Module):
    def forward(self, x, n):
        res: List[torch.Tensor] = [x]
        for i in range(int(n)):
            if i % 2 == 1:
                res.append(x + i)
        return torch.cat(res, 0)


class SplitByCount(torch.nn.Module):
    """A list whose length depends on an input, outside any loop: ONNX
    sequences from opset 11 (SplitToSequence, SequenceLength, SequenceAt,
    ConcatFromSequence)."""

    def forward(self, x, n):
        parts = torch.split(x, int(n))
        return len(parts), parts[-1], torch.cat(parts, 0) * 2


class FixedList(torch.nn.Module):
    """Lists with a length known at export time stay plain values (any opset)."""

    def forward(self, x):
        parts = [x, x * 2, x * 3]
        parts.append(x - 1)
        return torch.stack(parts, 1), len(parts), parts[1]


class MutatedInIf(torch.nn.Module):
    def forward(self, x, flag: bool):
        y = x.clone()
        if flag:
            y.add_(10)
        else:
            y.mul_(-1)
        return y


class ShiftedWindow(torch.nn.Module):
    """Swin's shifted windows: a copied list, updated under conditions on
    static sizes, then sum() of it. The branch not taken writes to the list
    too: the example run must not let it change the taken one's values."""

    def __init__(self, window: int):
        super().__init__()
        self.window = window
        self.shift = [1, 2]

    def forward(self, x):
        shift = self.shift.copy()
        if self.window >= x.size(1):
            shift[0] = 0
        if self.window >= x.size(2):
            shift[1] = 0
        if sum(shift) > 0:
            x = torch.roll(x, shifts=(-shift[0], -shift[1]), dims=(1, 2))
        return x * (sum(shift) + 1)


class ListSum(torch.nn.Module):
    """sum() of lists of numbers computed at run time (ints and floats)."""

    def forward(self, x, n: int):
        ints = [int(x.argmax()), n, 2]
        floats = [float(x.max()), 0.5]
        return x * sum(ints) + sum(floats)


class Features(torch.nn.Module):
    """torchvision's IntermediateLayerGetter and segmentation heads: an
    OrderedDict filled under conditions on constant keys, read back, tested
    with `in`, and returned."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleDict({"a": torch.nn.ReLU(), "b": torch.nn.Tanh(), "c": torch.nn.Sigmoid()})
        self.keep = {"a": "low", "c": "high"}

    def forward(self, x) -> Dict[str, torch.Tensor]:
        feats = OrderedDict()
        for name, layer in self.layers.items():
            x = layer(x)
            if name in self.keep:
                feats[self.keep[name]] = x
        out = OrderedDict()
        out["main"] = feats["high"] * 2
        if "low" in feats:
            out["aux"] = feats["low"] + len(feats)
        feats["high"] = feats["high"] - 1  # a later store: reads after it see the new value
        out["late"] = feats["high"]
        return out


class ResizeLike(torch.nn.Module):
    """deeplabv3's ASPP pooling, scripted: F.interpolate to a size read from a
    shape. Its recompute_scale_factor branches cast None in code that never
    runs, which LibTorch's constant propagation cannot fold by itself."""

    def forward(self, x):
        size = x.shape[-2:]
        y = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return torch.nn.functional.interpolate(y, size=size, mode="bilinear", align_corners=False) + x


class MutatedInLoop(torch.nn.Module):
    def forward(self, x, n):
        acc = torch.zeros_like(x)
        for i in range(int(n)):
            acc.add_(x * i)
            acc[0] = acc[0] + 1
        return acc


@torch.jit.script
def loop(x, y):
    for i in range(int(y)):
        x = x + i
    return x


class LoopModel(torch.nn.Module):
    """The documented traced example: the loop is unrolled into Adds."""

    def forward(self, x, y):
        for i in range(y):
            x = x + i
        return x


class LoopModel2(torch.nn.Module):
    """The documented mixed example: traced module calling a scripted loop."""

    def forward(self, x, y):
        return loop(x, y)


class RangeStep(torch.nn.Module):
    """range(start, end, step) in scripted loops: the trip count is
    aten::__range_length, the loop variable aten::__derive_index."""

    def forward(self, x):
        s = x
        for i in range(1, x.size(0), 2):
            s = s + i
        for j in range(x.size(0), 0, -3):
            s = s * j
        return s


class ListSlices(torch.nn.Module):
    """Slices of a fixed-length list (aten::slice.t), Python's rules for
    omitted, negative and out-of-range bounds and steps."""

    def forward(self, x):
        l = [x, x * 2, x * 3, x * 4, x * 5]
        a = l[1:]
        b = l[-2:]
        c = l[::2]
        d = l[::-1]
        e = l[1:10:3]
        return a[0] + b[0] * 10 + c[2] * 100 + d[0] - e[1], len(a) + len(c) + len(d) + len(e) + len(l[7:])


class ListPop(torch.nn.Module):
    """list.pop() and list.pop(i): the element, and the list without it after."""

    def forward(self, x):
        l = [x, x * 2, x * 3, x * 4]
        last = l.pop()
        first = l.pop(0)
        mid = l.pop(-2)
        return last + first * 10 + mid * 100 + l[0], len(l)


class EarlyReturnInLoop(torch.nn.Module):
    """A return inside a loop: the result is prim::Uninitialized until the
    loop sets it (a placeholder in ONNX, never read)."""

    def forward(self, x):
        for i in range(x.size(0)):
            if i == 2:
                return x * i
        return x


class OptionalFromIf(torch.nn.Module):
    """An Optional that one branch leaves None: `is None` reads whether it holds a value."""

    def forward(self, x):
        y: Optional[torch.Tensor] = None
        if bool(x.sum() > 0):
            y = x + 1
        if y is not None:
            return y * 2
        return x - 1


class OptionalInLoop(torch.nn.Module):
    """An Optional carried through a loop, None until the first iteration sets it."""

    def forward(self, x):
        y: Optional[torch.Tensor] = None
        for i in range(x.size(0)):
            if y is None:
                y = x[i]
            else:
                y = y * 0.5 + x[i]
        if y is None:
            return x.sum(0) - 100
        return y


class InsertInLoop(torch.nn.Module):
    """`results.insert(0, ...)` in a loop over a static list (torchvision's
    FeaturePyramidNetwork): l[:i] + [v] + l[i:]."""

    def forward(self, x):
        parts = [x, x * 2, x * 3]
        results = [parts[-1]]
        for idx in range(len(parts) - 2, -1, -1):
            results.insert(0, parts[idx] + results[0])
        results.insert(-1, x - 1)
        results.insert(10, x + 5)
        return results[0], results[1], results[2], results[3], results[4]


class DictUpdate(torch.nn.Module):
    """`losses = {}; losses.update(a); losses.update(b)` (torchvision's
    detection models) with dicts of known keys."""

    def forward(self, x):
        losses: Dict[str, torch.Tensor] = {}
        a = {"cls": x.sum(), "box": x.mean()}
        b = {"box": x.max(), "rpn": x.min()}
        losses.update(a)
        losses.update(b)
        return losses["cls"] + losses["box"] * losses["rpn"], len(losses)


class DictViews(torch.nn.Module):
    """keys(), values() and items() of a dict with known keys (torchvision's
    FeaturePyramidNetwork and MultiScaleRoIAlign read their feature dicts so)."""

    def forward(self, x):
        d: Dict[str, torch.Tensor] = OrderedDict()
        d["a"] = x
        d["b"] = x * 2
        names = list(d.keys())
        vals = list(d.values())
        total = x * 0
        for k, v in d.items():
            if k in ["b", "c"]:
                total = total + v
        return vals[0] + vals[1] + total, len(names)


class FeaturePyramid(torch.nn.Module):
    """torchvision's FeaturePyramidNetwork: the levels are list(d.values()) of
    a dict with known keys, walked top-down with insert(0, ...), and the
    result a dict built from zip(names, results)."""

    def forward(self, x):
        d: Dict[str, torch.Tensor] = {"a": x, "b": x + 1, "c": x * 2}
        feats = list(d.values())
        out = [feats[-1]]
        for idx in range(len(feats) - 2, -1, -1):
            out.insert(0, feats[idx] + out[0])
        names = list(d.keys())
        names.append("pool")
        out.append(out[-1] * 0.5)
        result = OrderedDict([(k, v) for k, v in zip(names, out)])
        return torch.stack(list(result.values())), result["pool"]


class LengthOfBuiltList(torch.nn.Module):
    """`images = [img for img in images]; for i in range(len(images)):
    images[i] = ...` (torchvision's GeneralizedRCNNTransform): the length of
    the built list is a constant, so the loop unrolls."""

    def forward(self, xs: List[torch.Tensor]):
        images = [img for img in xs]
        images.append(xs[0] * 2)
        for i in range(len(images)):
            images[i] = images[i] + i
        return torch.stack(images)



class DetectionPostprocess(torch.nn.Module):
    """torchvision's detection postprocessing, scripted: a dict per image
    appended to a list, then changed through the list (`result[i]["boxes"]
    = ...`), keys tested (`if "masks" in pred:`) and the list of dicts
    returned; the per-image box counts read from shapes split the batch."""

    def forward(self, x, images: List[torch.Tensor]):
        counts = [int(img.size(0)) for img in images]
        pieces = x.split(counts, 0)
        result: List[Dict[str, torch.Tensor]] = []
        for i in range(len(pieces)):
            result.append({"boxes": pieces[i], "scores": pieces[i].sum(1)})
        for i, pred in enumerate(result):
            boxes = pred["boxes"]
            result[i]["boxes"] = boxes * 2
            if "masks" in pred:
                result[i]["masks"] = pred["masks"] + 1
        return result


class ContainsInLoop(torch.nn.Module):
    """`t.dtype in (torch.float32, torch.float64)` in a loop over a list
    (torchvision's _upcast), and `in` on a value known only at run time."""

    def forward(self, xs: List[torch.Tensor]):
        out: List[torch.Tensor] = []
        for t in xs:
            if t.dtype in (torch.float32, torch.float64):
                t = t * 2
            if int(t.argmax()) in [0, 2, 5]:
                t = t + 100
            out.append(t)
        return out


class DictKeysLoop(torch.nn.Module):
    """`for k in d: out[k] = list(d[k].split(sizes))` (torchvision's
    RetinaNet splits its head outputs so), then `p.extend([...])` (its
    LastLevelP6P7)."""

    def forward(self, x):
        head: Dict[str, torch.Tensor] = {"cls": x * 2, "box": x + 1}
        out: Dict[str, List[torch.Tensor]] = {}
        for k in head:
            out[k] = list(head[k].split([1, 2], dim=0))
        p = out["cls"]
        p.extend([out["box"][1], x[:1] * 3])
        return torch.cat(p, 0)

x = torch.randn(3, 4)
pos, neg = x.abs() + 0.1, -x.abs() - 0.1
five = torch.tensor(5)
CASES = [
    Case("data_if", DataIf(), (pos,), script=True, opsets=OPSETS, more_args=[(neg,)]),
    Case("nested_if", NestedIf(), (pos * 3,), script=True, opsets=OPSETS,
         more_args=[(pos * 0.1,), (neg,)]),
    Case("if_with_ints", IfWithInts(), (pos,), script=True, opsets=OPSETS, more_args=[(neg,)]),
    Case("for_loop", ForLoop(), (x, five), script=True, opsets=OPSETS,
         more_args=[(x, torch.tensor(0)), (x, torch.tensor(9))]),
    Case("while_loop", WhileLoop(), (pos,), script=True, opsets=OPSETS, more_args=[(pos * 1000,), (neg,)]),
    Case("captured_in_loop", CapturedInLoop(), (x, torch.tensor(3)), script=True, opsets=OPSETS,
         more_args=[(x, torch.tensor(0)), (x, torch.tensor(6))]),
    Case("loop_in_if", LoopInIf(), (pos, torch.tensor(3)), script=True, opsets=OPSETS,
         more_args=[(neg, torch.tensor(3)), (pos, torch.tensor(0))]),
    Case("if_in_loop", IfInLoop(), (x, torch.tensor(4)), script=True, opsets=OPSETS,
         more_args=[(x, torch.tensor(1)), (x, torch.tensor(7))]),
    Case("primitive_inputs", PrimitiveInputs(), (x, 3, 0.5, True), script=True, opsets=OPSETS,
         more_args=[(x, 0, 2.0, False), (x, 5, -1.5, True)]),
    Case("training_branch_folds", Training(), (x,), script=True, opsets=(9, 13, 17)),
    # ONNX Loop/If carry sequences from opset 13.
    Case("list_in_loop", ListInLoop(), (x, torch.tensor(4)), script=True, opsets=(13, 17),
         more_args=[(x, torch.tensor(1)), (x, torch.tensor(6))], error_below={11: "opset 13"}),
    Case("conditional_append", ConditionalAppend(), (x, torch.tensor(5)), script=True, opsets=(13, 17),
         more_args=[(x, torch.tensor(0)), (x, torch.tensor(8))], error_below={12: "opset 13"}),
    Case("split_by_count", SplitByCount(), (torch.randn(7, 3), torch.tensor(2)), script=True, opsets=(11, 13, 17),
         more_args=[(torch.randn(7, 3), torch.tensor(7)), (torch.randn(7, 3), torch.tensor(3))],
         error_below={10: "opset 11"}),
    Case("fixed_list", FixedList(), (x,), script=True, opsets=(9, 13, 17)),
    Case("mutated_in_if", MutatedInIf(), (x, True), script=True, opsets=OPSETS, more_args=[(x, False)]),
    Case("shifted_window", ShiftedWindow(4), (torch.randn(2, 6, 8),), script=True, opsets=(9, 13, 17)),
    Case("shifted_window_partly", ShiftedWindow(6), (torch.randn(2, 6, 8),), script=True, opsets=(9, 17)),
    Case("shifted_window_none", ShiftedWindow(8), (torch.randn(2, 6, 8),), script=True, opsets=(9, 17)),
    # sizes dynamic: the list is updated in run-time branches (a sequence), and sum() of it reads the
    # sequence (it failed the ONNX checker); other sizes take the other branches
    Case("shifted_window_dynamic", ShiftedWindow(4), (torch.randn(2, 6, 8),), script=True, opsets=(13, 17),
         extra=("--dynamic-axes", '{"x":[0,1,2]}', "--input-names", "x"), error_below={11: "opset 13"},
         more_args=[(torch.randn(1, 3, 8),), (torch.randn(2, 3, 2),), (torch.randn(3, 7, 9),)]),
    Case("list_sum", ListSum(), (x, 3), script=True, opsets=(11, 13, 17), more_args=[(-x, 5)]),
    Case("features_dict", Features(), (x,), script=True, opsets=(9, 17)),
    Case("resize_like", ResizeLike(), (torch.randn(1, 2, 5, 6),), script=True, opsets=(11, 17)),
    Case("mutated_in_loop", MutatedInLoop(), (x, torch.tensor(3)), script=True, opsets=OPSETS,
         more_args=[(x, torch.tensor(0)), (x, torch.tensor(5))]),
    Case("range_step", RangeStep(), (torch.randn(5, 3),), script=True, opsets=OPSETS,
         extra=("--dynamic-axes", '{"x":[0]}', "--input-names", "x"),
         more_args=[(torch.randn(1, 3),), (torch.randn(8, 3),), (torch.randn(2, 3),)]),
    Case("list_slices", ListSlices(), (x,), script=True, opsets=(9, 13, 17)),
    Case("early_return_in_loop", EarlyReturnInLoop(), (torch.randn(4, 3),), script=True, opsets=OPSETS,
         extra=("--dynamic-axes", '{"x":[0]}', "--input-names", "x"), more_args=[(torch.randn(2, 3),)]),
    Case("optional_from_if", OptionalFromIf(), (pos,), script=True, opsets=OPSETS, more_args=[(neg,)]),
    Case("optional_in_loop", OptionalInLoop(), (torch.randn(3, 2),), script=True, opsets=OPSETS,
         extra=("--dynamic-axes", '{"x":[0]}', "--input-names", "x"),
         more_args=[(torch.randn(1, 2),), (torch.randn(0, 2),), (torch.randn(5, 2),)]),
    Case("list_pop", ListPop(), (x,), script=True, opsets=(9, 13, 17)),
    Case("loop_model_traced", LoopModel(), (torch.ones(2, 3, dtype=torch.long), torch.tensor(5)), opsets=(9, 13, 17)),
    Case("insert_in_loop", InsertInLoop(), (x,), script=True, opsets=(9, 13, 17)),
    Case("dict_update", DictUpdate(), (x,), script=True, opsets=(9, 13, 17)),
    Case("dict_views", DictViews(), (x,), script=True, opsets=(9, 13, 17)),
    Case("feature_pyramid", FeaturePyramid(), (x,), script=True, opsets=(9, 13, 17)),
    Case("length_of_built_list", LengthOfBuiltList(), ([x, -x],), script=True, opsets=(9, 13, 17)),
    Case("detection_postprocess", DetectionPostprocess(), (torch.randn(5, 4), [torch.randn(2, 3), torch.randn(3, 3)]),
         script=True, opsets=(9, 13, 17)),
    Case("contains_in_loop", ContainsInLoop(), ([torch.tensor([3.0, 1.0, 2.0]), torch.tensor([1.0, 2.0, 5.0])],),
         script=True, opsets=(11, 17), more_args=[([torch.tensor([9.0, 1.0, 2.0]), torch.tensor([1.0, 2.0, 0.5])],)]),
    Case("dict_keys_loop", DictKeysLoop(), (x,), script=True, opsets=(9, 13, 17)),
    Case("loop_model2", LoopModel2(), (torch.ones(2, 3, dtype=torch.long), torch.tensor(5)), opsets=OPSETS,
         more_args=[(torch.ones(2, 3, dtype=torch.long), torch.tensor(9))]),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)


class ImplicitCastType(torch.jit.ScriptModule):
    """The documented example (seeds/002): scalars take x's dtype."""

    @torch.jit.script_method
    def forward(self, x):
        y = x + 2
        return y + 3


def test_implicit_cast_type(tmp_path):
    """Both constants are exported in x's dtype (float32 and float64), and the
    result matches PyTorch in ONNX Runtime."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    import harness

    for dtype, onnx_type in [(torch.float32, onnx.TensorProto.FLOAT), (torch.float64, onnx.TensorProto.DOUBLE)]:
        x = torch.tensor([1.0], dtype=dtype)
        pt, args, out = str(tmp_path / "m.pt"), str(tmp_path / "a.pt"), str(tmp_path / "m.onnx")
        ImplicitCastType().save(pt)
        torch.save((x,), args)
        harness.export(pt, out, args_path=args, extra=["--no-constant-folding"])
        m = harness.full_check(out)
        # (the main graph's constants are initializers; the module has no weights)
        constants = [numpy_helper.to_array(a.t) for n in m.graph.node if n.op_type == "Constant" for a in n.attribute]
        constants += [numpy_helper.to_array(i) for i in m.graph.initializer]
        assert sorted(float(c) for c in constants) == [2.0, 3.0]
        assert all(c.dtype == np.dtype(dtype.__repr__().split(".")[1]) for c in constants)
        adds = [n for n in m.graph.node if n.op_type == "Add"]
        assert len(adds) == 2
        assert m.graph.output[0].type.tensor_type.elem_type == onnx_type
        actual, _ = harness.run_ort(out, [x.numpy()], str(tmp_path))
        harness.compare([ImplicitCastType()(x)], actual)
