"""Runs optimum-onnx's `main_export` on small random-weight models, once
with torch.onnx as shipped and once with torch.onnx.export swapped for
torch2onnx.export, all in this one process. Started by run.py.

For each case: `AutoConfig.for_model(model_type, <small sizes>)`, the task's
model class `from_config`, every parameter drawn again from N(0, 0.1) (norm
gains 1 + N(0, 0.1)), so attention is far from uniform and a dropped mask or
bias shows; `save_pretrained` into a temporary folder with a tiny
WordLevel `PreTrainedTokenizerFast` for text models (main_export reads it
for the pad token of `text-classification` when the config has none).
Then `main_export(folder, out, task=task)` with optimum's defaults: its own
validation against PyTorch (atol from the model's OnnxConfig, 1e-5 by
default) on its dummy inputs (batch 2, sequence 16, random right padding).

optimum logs a validation value mismatch (AtolError, OutputMatchError) as a
warning and returns; the harness wraps optimum's `validate_models_outputs`
to record its outcome and the largest difference it measured, so such a case
fails here. It then runs the same validation again at other dummy shapes
(batch 3, sequence 9), which checks the dynamic axes: that column fails a
case too.
"""
import json
import os
import random
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402
from cases import OPTIMUM  # noqa: E402

WEIGHT_STD = 0.1
OTHER_SHAPES = {"batch_size": 3, "sequence_length": 9}
SEED = 1234


def seed_all(seed):
    import numpy as np
    import torch
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def redraw_weights(model, std=WEIGHT_STD):
    import torch
    with torch.no_grad():
        norm_weights = set()
        for mod in model.modules():
            if "norm" in type(mod).__name__.lower() and getattr(mod, "weight", None) is not None:
                if isinstance(mod.weight, torch.nn.Parameter):
                    norm_weights.add(id(mod.weight))
        for _, p in model.named_parameters():
            if id(p) in norm_weights:
                p.normal_(1.0, std)
            else:
                p.normal_(0.0, std)


def save_tokenizer(folder, vocab_size):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    specials = ["<pad>", "<unk>", "<s>", "</s>", "<mask>"]
    vocab = {t: i for i, t in enumerate(specials)}
    for i in range(len(specials), vocab_size):
        vocab[f"w{i}"] = i
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", mask_token="<mask>", model_max_length=64)
    fast.save_pretrained(folder)


def build_model(model_type, task, config_kwargs, processor, folder):
    from optimum.exporters.tasks import TasksManager
    from transformers import AutoConfig
    seed_all(SEED)
    config = AutoConfig.for_model(model_type, **config_kwargs)
    model_class = TasksManager.get_model_class_for_task(task.replace("-with-past", ""), framework="pt",
                                                        library="transformers", model_type=model_type)
    model = model_class.from_config(config)
    redraw_weights(model)
    model.eval()
    model.save_pretrained(folder)
    if "vocab_size" in config.to_dict() and model_type not in ("whisper",):
        save_tokenizer(folder, config.vocab_size)
    if processor is not None:
        import transformers
        cls_name, kwargs = processor
        getattr(transformers, cls_name)(**kwargs).save_pretrained(folder)


class ValidationRecorder:
    """Wraps optimum.exporters.onnx.convert.validate_models_outputs and the
    module's `np.allclose`: records the largest |reference - ONNX| of every
    value check and the exception validation raised (optimum itself only
    logs AtolError/OutputMatchError). Restored on exit."""

    def __init__(self):
        import numpy as np
        from optimum.exporters.onnx import convert
        self.convert = convert
        self.np = np
        self.runs = []  # [{"max_diff", "error", "kwargs"}]
        self.current = None

    def __enter__(self):
        convert = self.convert
        np = self.np
        rec = self
        self.orig_validate = convert.validate_models_outputs
        self.orig_np = convert.np

        class NumpyProxy:
            def __getattr__(self, name):
                return getattr(np, name)

            @staticmethod
            def allclose(a, b, *args, **kwargs):
                if rec.current is not None:
                    try:
                        d = float(np.amax(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))))
                    except Exception:
                        d = float("nan")
                    if rec.current["max_diff"] is None or not d <= rec.current["max_diff"]:
                        rec.current["max_diff"] = d
                return np.allclose(a, b, *args, **kwargs)

        def validate_models_outputs(*args, **kwargs):
            run = {"max_diff": None, "error": None, "args": args, "kwargs": kwargs}
            rec.runs.append(run)
            rec.current = run
            try:
                return rec.orig_validate(*args, **kwargs)
            except Exception as e:
                run["error"] = common.first_lines(e)
                raise
            finally:
                rec.current = None

        convert.np = NumpyProxy()
        convert.validate_models_outputs = validate_models_outputs
        return self

    def validate_again(self, input_shapes):
        """optimum's validation of the last export at other dummy shapes."""
        if not self.runs:
            return None
        last = self.runs[0]
        kwargs = dict(last["kwargs"])
        shapes = dict(kwargs.get("input_shapes") or {})
        shapes.update(input_shapes)
        kwargs["input_shapes"] = shapes
        run = {"max_diff": None, "error": None}
        self.current = run
        try:
            self.orig_validate(*last["args"], **kwargs)
        except Exception as e:
            run["error"] = common.first_lines(e)
        finally:
            self.current = None
        return run

    def __exit__(self, *exc):
        self.convert.np = self.orig_np
        self.convert.validate_models_outputs = self.orig_validate
        return False


def run_case(task, mode, model_dir, out_dir, t2o_export, t2o_error):
    from optimum.exporters.onnx import main_export
    res = {"ok": False, "error": None, "max_diff": None, "max_diff_other": None, "validation": None}
    if mode == "torch2onnx" and t2o_export is None:
        res["error"] = "import torch2onnx failed: " + common.first_lines(t2o_error)
        return res
    calls = []
    seed_all(SEED + 1)
    t0 = time.perf_counter()
    try:
        with ValidationRecorder() as rec, common.export_swapped(mode, calls, t2o_export):
            main_export(model_dir, out_dir, task=task)
            seed_all(SEED + 2)
            other = rec.validate_again(OTHER_SHAPES)
    except Exception as e:
        res["error"] = common.first_lines(e)
        common.log(common.format_tb())
        rec_runs = rec.runs if "rec" in locals() else []
        other = None
    else:
        rec_runs = rec.runs
    res["wall_seconds"] = time.perf_counter() - t0
    res.update(common.summarize_calls(calls))
    if rec_runs:
        res["max_diff"] = rec_runs[0]["max_diff"]
        res["validation"] = rec_runs[0]["error"]
    if other is not None:
        res["max_diff_other"] = other["max_diff"]
        res["validation_other"] = other["error"]
    if res["error"] is None:
        if not calls:
            res["error"] = "torch.onnx.export was never called through the swap"
        elif res["validation"]:
            res["error"] = "optimum validation: " + res["validation"]
        elif not rec_runs:
            res["error"] = "optimum did not validate the export"
        elif other is not None and other["error"]:
            res["error"] = f"optimum validation at {OTHER_SHAPES}: " + other["error"]
        else:
            res["ok"] = True
    return res


def main():
    args = common.worker_args()
    with open(args.cases) as f:
        todo = json.load(f)
    table = {c[0]: c for c in OPTIMUM}
    import torch  # noqa: F401
    from transformers.utils import logging as hf_logging
    from optimum.utils import logging as opt_logging
    hf_logging.set_verbosity_warning()
    opt_logging.set_verbosity_info()
    t2o_export, t2o_error = common.load_torch2onnx()
    results = common.Results(args.results)
    results.info(torch2onnx=common.torch2onnx_build())
    built, build_error = None, None
    for case, mode in todo:
        name, model_type, task, config_kwargs, processor = table[case]
        case_dir = os.path.join(args.tmp, name.replace("/", "__"))
        model_dir = os.path.join(case_dir, "model")
        common.log(f"=== {case} [{mode}]")
        results.start(case, mode)
        if built != case:
            shutil.rmtree(case_dir, ignore_errors=True)
            os.makedirs(case_dir)
            built, build_error = case, None
            try:
                build_model(model_type, task, config_kwargs, processor, model_dir)
            except Exception as e:
                build_error = "building the model failed: " + common.first_lines(e)
                common.log(common.format_tb())
        out_dir = os.path.join(case_dir, mode)
        if build_error:
            res = {"ok": False, "error": build_error}
        else:
            try:
                with common.time_guard(args.soft_timeout, args.hard_timeout):
                    res = run_case(task, mode, model_dir, out_dir, t2o_export, t2o_error)
            except common.CaseTimeout as e:
                res = {"ok": False, "error": f"timeout: {e}"}
        shutil.rmtree(out_dir, ignore_errors=True)
        results.result(case, mode, **res)
        common.log(f"--- {case} [{mode}]: {'ok' if res['ok'] else 'FAIL ' + str(res['error'])}")
        # the model folder goes once the case's last mode ran
        nxt = todo[todo.index([case, mode]) + 1][0] if todo.index([case, mode]) + 1 < len(todo) else None
        if nxt != case:
            shutil.rmtree(case_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
