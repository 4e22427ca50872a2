"""transformers models through both paths (issue 38): exported with torch2onnx.export (dynamo=False with
dynamic_axes, dynamo=True with named torch.export Dims, which the models bound: BERT's seq <= 128, Mistral's
past <= sliding_window - 1), compared with eager PyTorch in ONNX Runtime at the example and at other batch /
sequence / past sizes within the ranges. T2O_TRANSFORMERS_FULL=1: every case of corpus.py at opsets 17, 20,
23 and 28 (make test-transformers); otherwise corpus.SAMPLE at opset 18."""
import io
import os
import sys
import warnings

import numpy as np
import onnx
import pytest
import torch

pytest.importorskip("transformers")
sys.path.insert(0, os.path.dirname(__file__))
import corpus  # noqa: E402

import torch2onnx  # noqa: E402
from torch2onnx import verification  # noqa: E402

FULL = os.environ.get("T2O_TRANSFORMERS_FULL") == "1"
CASES = [c for c in corpus.CASES if FULL or c.name in corpus.SAMPLE]
OPSETS = [17, 20, 23, 28] if FULL else [18]
SIZES = corpus.SIZES


def flat(outputs):
    if isinstance(outputs, torch.Tensor):
        return [outputs]
    if hasattr(outputs, "to_tuple"):
        outputs = outputs.to_tuple()
    return [t for o in outputs for t in flat(o)] if isinstance(outputs, (tuple, list)) else []


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case, dynamo, opset):
    check(case, dynamo, opset)


# name -> (RMSNormalization nodes, Attention nodes taking the cache) for two layers: RMS norms two per layer and
# the final one (Qwen3's q / k norms two more each); GPT-J's attention is eager (matmul, softmax, matmul:
# fuse_eager_attention makes it one Attention node, which then takes the cache).
# Mistral / Gemma3 slide their cache over a window (the dynamo path's cache is x[:, :, -(window - 1):], a length
# the size analysis follows); Mixtral / Qwen2-MoE route tokens to experts (the TorchScript path's example run
# stops there, so the second layer's heads are not known at conversion: the node shares them at run time).
FUSED = {"llama+cache": (5, 2), "qwen3+cache": (9, 2), "phi3+cache": (5, 2), "gemma+cache": (5, 2),
         "qwen2+cache": (5, 2), "falcon+cache": (0, 2), "gptj+cache": (0, 2), "mistral+cache": (5, 2),
         "gemma3+cache": (13, 2), "mixtral+cache": (5, 2), "qwen2-moe+cache": (5, 2)}
FUSED_CASES = list(FUSED) if FULL else ["llama+cache"]


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("name", FUSED_CASES)
def test_decoder_step_fusions_at_23(name, dynamo):
    """A KV-cache step at opset 23: one RotaryEmbedding per q and k (cos / sin computed from the positions at
    run time; Phi-3's partial rotary and GPT-J's interleaved one included), one Attention per layer taking the
    cache as past_key / past_value and returning it (grouped-query: no repeated K/V; Falcon's multi-query),
    RMSNormalization for every RMS norm."""
    case = next(c for c in corpus.CASES if c.name == name)
    proto = check(case, dynamo, 23)
    layers = 2
    rms, cached = FUSED[name]
    ops = [n.op_type for n in proto.graph.node]
    assert ops.count("RotaryEmbedding") == 2 * layers, ops
    assert ops.count("RMSNormalization") == rms, ops
    attention = [n for n in proto.graph.node if n.op_type == "Attention"]
    assert len(attention) == cached and all(len(n.input) == 6 for n in attention), attention
    # the returned cache: present_key / present_value, or (a sliding window's) their last window - 1 positions
    outputs = {o.name for o in proto.graph.output}
    windows = {n.output[0] for n in proto.graph.node if n.op_type == "Slice" and n.output[0] in outputs}
    readers = {i: n.output[0] for n in proto.graph.node for i in n.input}
    assert all(p in outputs or readers.get(p) in windows for n in attention for p in n.output[1:3])


# A row of padding only (every query masked from every key) at opset 23, where the attention is an Attention
# node: transformers masks with torch.finfo.min, which ONNX Runtime's Attention takes for -inf (zeros where
# PyTorch averages the values; guard_attention_masks). T5 adds it to its float position bias (sdpa), GPT-J
# adds it in its eager attention, BERT and Llama pass masks to sdpa.
MASKED_CASES = ["t5", "gptj+cache", "bert", "llama+cache"] if FULL else ["t5", "gptj+cache"]


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("name", MASKED_CASES)
def test_fully_masked_rows_at_23(name, dynamo):
    case = next(c for c in corpus.CASES if c.name == name)
    proto = check(case, dynamo, 23, fully_masked=True)
    assert any(n.op_type == "Attention" for n in proto.graph.node)


def test_bloom_merged_heads_at_23():
    """BLOOM computes attention with the heads merged into the batch (baddbmm adding ALiBi, views, bmm):
    fuse_eager_attention makes each layer one Attention node taking the cache (the ALiBi bias viewed as
    [B, H, 1, S] in the mask). Through torch.export both layers; through the TorchScript exporter the first
    (the second layer's batch is read back from the first one's merged output, which the size analysis does not
    follow yet)."""
    case = next(c for c in corpus.CASES if c.name == "bloom+cache")
    for dynamo, layers in ((True, 2), (False, 1)):
        proto = check(case, dynamo, 23)
        attention = [n for n in proto.graph.node if n.op_type == "Attention"]
        assert len(attention) >= layers and all(len(n.input) == 6 for n in attention), (dynamo, attention)


# Opsets 24-28 (issue 45): a 2-layer Llama with a KV cache and a 2-layer encoder through both paths; `make test`
# runs each (model, path) at one of the three in turn, T2O_TRANSFORMERS_FULL=1 all of them.
NEW_OPSETS = (24, 26, 28)
NEW_OPSET_CASES = [(name, dynamo, opset) for i, (name, dynamo) in
                   enumerate((n, d) for n in ("llama+cache", "bert") for d in (False, True))
                   for opset in NEW_OPSETS if FULL or opset == NEW_OPSETS[i % len(NEW_OPSETS)]]


@pytest.mark.skipif(torch2onnx._C.MAX_OPSET < 28, reason="this build stops before opset 28")
@pytest.mark.parametrize("name,dynamo,opset", NEW_OPSET_CASES)
def test_new_opsets(name, dynamo, opset):
    """The decoder keeps its opset-23 fusions (RotaryEmbedding per q and k, RMSNormalization, one Attention per
    layer taking the cache) and its SiLU MLP becomes Swish at 24 (ONNX Runtime 1.32 runs Swish at 24 only)."""
    case = next(c for c in corpus.CASES if c.name == name)
    proto = check(case, dynamo, opset)
    assert {o.domain: o.version for o in proto.opset_import}[""] == opset
    ops = [n.op_type for n in proto.graph.node]
    if name == "llama+cache":
        rms, cached = FUSED[name]
        assert ops.count("RotaryEmbedding") == 4 and ops.count("RMSNormalization") == rms, ops
        assert ops.count("Attention") == cached and ops.count("Swish") == (2 if opset == 24 else 0), ops


def padded_row(args, kwargs):
    """The inputs with the first row's attention mask all zeros (a row of padding only: every query of it masked
    from every key), or None without a mask."""
    if "attention_mask" in kwargs:
        mask = kwargs["attention_mask"].clone()
        mask[0] = 0
        return args, {**kwargs, "attention_mask": mask}
    if len(args) >= 2 and isinstance(args[1], torch.Tensor) and args[1].dtype == torch.long:  # a decoding step
        mask = args[1].clone()
        mask[0] = 0
        return (args[0], mask, *args[2:]), kwargs
    return None


def check(case, dynamo, opset, fully_masked=False):
    """Export at `opset`, check, and compare with eager PyTorch at the corpus sizes (`fully_masked`: also with
    the first row all padding)."""
    model, inputs, shapes, axes, names = case.make()
    args, kwargs = inputs(*SIZES[case.kind][0])
    f = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        if dynamo:
            torch2onnx.export(model, args, f, kwargs=kwargs, dynamo=True, dynamic_shapes=shapes, opset_version=opset)
        else:
            torch2onnx.export(model, args + (kwargs,) if kwargs else args, f, input_names=names,
                              dynamic_axes=axes, opset_version=opset)
    proto = onnx.load_from_string(f.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    session = verification.ort_session(f.getvalue())
    graph_inputs = [i.name for i in session.get_inputs()]
    runs = [inputs(*size) for size in SIZES[case.kind]]
    if fully_masked:
        runs += [r for r in (padded_row(*inputs(*size)) for size in SIZES[case.kind]) if r is not None]
        assert len(runs) > len(SIZES[case.kind]), f"{case.name} takes no attention mask"
    for size, (args, kwargs) in zip([*SIZES[case.kind], *SIZES[case.kind]], runs):
        with torch.no_grad():
            expected = flat(model(*args, **kwargs))
        values = flat(list(args)) + list(kwargs.values())
        actual = session.run(None, dict(zip(graph_inputs, [v.numpy() for v in values])))
        assert len(actual) >= 1
        for a, e in zip(actual, expected):
            e = e.numpy()
            assert a.shape == e.shape, f"{case.name} at {size}: shape {a.shape} vs {e.shape}"
            bad = np.abs(a - e) > 1e-4 * (1 + np.abs(e))
            assert not bad.any(), f"{case.name} at {size}: max |diff| {np.abs(a - e).max():.3g}"
    return proto
