"""ONNXProgram: what export(..., dynamo=True) returns, with torch.onnx 2.14's
API (issue 41): model_proto, model (an onnx_ir model), exported_program,
save, apply_weights, initialize_inference_session, release, optimize,
rename_axes, compute_values, __call__ (ONNX Runtime), call_reference (ONNX's
reference evaluator) and __repr__.

The exported bytes (or file) stay the model until something asks for the
onnx_ir model or changes the model (apply_weights, optimize, rename_axes):
from then on the onnx_ir model is the model, as in torch.onnx."""
import gc
import os
import shutil
import tempfile
import textwrap
import warnings

import torch

# torch.onnx's threshold for writing the weights as external data when saving
# or starting a session (1.5 GiB: protobuf's limit is 2 GiB).
_LARGE_MODEL_THRESHOLD = 1536 * 1024 * 1024


def _ir():
    try:
        import onnx_ir
    except ImportError as e:
        raise ImportError("ONNXProgram.model is an onnx_ir model: `pip install onnx-ir`") from e
    return onnx_ir


def _default_session(model):
    """torch.onnx's session: ONNX Runtime with its errors only logged, CUDA where available, else the CPU."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    available = set(ort.get_available_providers())
    providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in available]
    return ort.InferenceSession(model, providers=providers, sess_options=options)


def _process_args(args, kwargs):
    """The program's inputs from call arguments, as torch.onnx passes them: flattened (pytree), None left
    out, complex tensors as their real view."""
    flat, _ = torch.utils._pytree.tree_flatten((args, kwargs))
    return tuple(torch.view_as_real(a.resolve_conj()) if isinstance(a, torch.Tensor) and a.is_complex() else a
                 for a in flat if a is not None)


def _to_numpy(value):
    import numpy as np

    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        if value.dtype == torch.bfloat16:
            import ml_dtypes

            return value.view(torch.uint16).numpy().view(ml_dtypes.bfloat16)
        return value.numpy()
    return np.array(value)


def _from_numpy(array):
    import numpy as np

    if array.dtype == np.dtype("O"):  # strings
        return array
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view(np.uint16)).view(torch.bfloat16)
    return torch.from_numpy(array)  # (np.ascontiguousarray would make a 0-d array 1-d)


class ONNXProgram:
    """An exported ONNX model, callable with torch tensors (torch.onnx.ONNXProgram's API).

    Attributes:
        exported_program: the torch.export program it was converted from.
    """

    def __init__(self, model_bytes, path, exported_program):
        # The model as the C++ core converted it (a ConvertedModel: checked, serialized on first use, as
        # torch.onnx's ONNXProgram holds its in-memory model), or its serialized bytes, or None when it was
        # written to `path` only.
        self._converted = None
        if model_bytes is not None and not isinstance(model_bytes, (bytes, bytearray)):
            self._converted, model_bytes = model_bytes, None
        self._data = model_bytes
        self._path = path
        self._model = None  # the onnx_ir model, once asked for (then it is the model)
        self.exported_program = exported_program
        self._inference_session = None
        self._tempdir = None
        self._capture_strategy = None

    # ------------------------------------------------------------ the model
    @property
    def model(self):
        """The model as an onnx_ir Model (needs onnx-ir); changes to it change the program."""
        if self._model is None:
            self._model = _ir().serde.deserialize_model(self._proto_of_bytes())
        return self._model

    @model.setter
    def model(self, value):
        self._model = value

    @property
    def _bytes(self):
        """The serialized model (serialized here the first time, from the converted model), or None."""
        if self._data is None and self._converted is not None:
            self._data = self._converted.to_bytes()
            self._converted = None
        return self._data

    def _proto_of_bytes(self):
        import onnx

        if self._bytes is not None:
            return onnx.load_from_string(self._bytes)
        return onnx.load(self._path)

    @property
    def model_proto(self):
        """The model as an onnx.ModelProto."""
        if self._model is not None:
            return _ir().serde.serialize_model(self._model)
        return self._proto_of_bytes()

    def _serialized(self):
        if self._model is None and self._bytes is not None:
            return self._bytes
        return self.model_proto.SerializeToString()

    def _initializer_bytes(self):
        if self._model is not None:
            return sum(v.const_value.nbytes for v in self._model.graph.initializers.values()
                       if v.const_value is not None)
        if self._converted is not None:
            return self._converted.initializer_bytes
        if self._bytes is not None:
            return len(self._bytes)
        return os.path.getsize(self._path)

    # ---------------------------------------------------------------- runs
    def __call__(self, *args, **kwargs):
        """Runs the model in ONNX Runtime on the arguments the exported program takes; a tuple of tensors."""
        import onnxruntime as ort

        inputs = _process_args(args, kwargs)
        if self._inference_session is None:
            self.initialize_inference_session()
        session = self._inference_session
        declared = session.get_inputs()
        if len(declared) != len(inputs):
            raise ValueError(f"the model takes {len(declared)} inputs, {len(inputs)} were given")
        feeds = {d.name: _to_numpy(v) for d, v in zip(declared, inputs)}
        options = ort.RunOptions()
        options.log_severity_level = 3
        return tuple(_from_numpy(o) for o in session.run(None, feeds, run_options=options))

    def call_reference(self, *args, **kwargs):
        """Runs the model with ONNX's reference evaluator (onnx.reference); a tuple of tensors."""
        import onnx.reference

        proto = self.model_proto
        evaluator = onnx.reference.ReferenceEvaluator(proto)
        inputs = _process_args(args, kwargs)
        names = [i.name for i in proto.graph.input if i.name not in {t.name for t in proto.graph.initializer}]
        outputs = evaluator.run(None, {n: _to_numpy(v) for n, v in zip(names, inputs)})
        return tuple(_from_numpy(o) for o in outputs)

    def compute_values(self, value_names, args=(), kwargs=None):
        """The values of the named intermediate values of the model on these arguments (ONNX Runtime)."""
        model = self.model
        values = {}
        for node in model.graph.all_nodes():
            for v in node.outputs:
                values[v.name] = v
        for v in list(model.graph.inputs) + list(model.graph.initializers.values()):
            values[v.name] = v
        missing = [n for n in value_names if n not in values]
        if missing:
            raise ValueError(f"Value '{missing[0]}' not found in the model. Please provide a valid value name.")
        self.release()
        original = list(model.graph.outputs)
        model.graph.outputs.clear()
        model.graph.outputs.extend(values[n] for n in value_names)
        try:
            return self(*args, **(kwargs or {}))
        finally:
            model.graph.outputs.clear()
            model.graph.outputs.extend(original)
            self.release()

    def initialize_inference_session(self, initializer=_default_session):
        """Starts the ONNX Runtime session __call__ uses (`initializer(model bytes or path)` makes it). A
        model of more than 1.5 GiB of weights is saved with external data into a temporary directory first."""
        if self._initializer_bytes() > _LARGE_MODEL_THRESHOLD:
            self._tempdir = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
            path = os.path.join(self._tempdir.name, "model.onnx")
            self.save(path, external_data=True)
            self._inference_session = initializer(path)
        elif self._model is None and self._bytes is None:
            self._inference_session = initializer(self._path)
        else:
            self._inference_session = initializer(self._serialized())

    def release(self):
        """Ends the inference session (and removes its temporary files)."""
        self._inference_session = None
        gc.collect()
        if self._tempdir is not None:
            self._tempdir.cleanup()
            self._tempdir = None

    # ---------------------------------------------------------- changes
    def save(self, destination, *, include_initializers=True, keep_initializers_as_inputs=False, external_data=None):
        """Writes the model to `destination` (a path; a binary file-like object where the weights stay
        inside). include_initializers=False leaves the weights out; keep_initializers_as_inputs lists them
        as graph inputs too; external_data (or weights over 1.5 GiB) writes them to `<destination>.data`."""
        import onnx

        large = external_data or (external_data is None and self._initializer_bytes() > _LARGE_MODEL_THRESHOLD)
        if large and hasattr(destination, "write"):
            raise TypeError("external_data needs destination to be a file path, not a file-like object")
        if (include_initializers and not keep_initializers_as_inputs and self._model is None
                and self._converted is not None and not hasattr(destination, "write")):
            # (written by the C++ core from the converted model, never serialized in memory; the weights
            # to `<destination>.data` when large)
            self._converted.write(os.fspath(destination), external_data=bool(large), external_threshold=0)
            return
        if include_initializers and not keep_initializers_as_inputs and not large and self._model is None:
            # (the exported bytes as they are; a file exported to a path is copied, not read into memory)
            if self._bytes is None:
                if hasattr(destination, "write"):
                    with open(self._path, "rb") as f:
                        shutil.copyfileobj(f, destination)
                elif not os.path.exists(destination) or not os.path.samefile(self._path, destination):
                    shutil.copyfile(self._path, os.fspath(destination))
            elif hasattr(destination, "write"):
                destination.write(self._bytes)
            else:
                with open(os.fspath(destination), "wb") as out:
                    out.write(self._bytes)
            return
        proto = self.model_proto
        if keep_initializers_as_inputs:
            present = {i.name for i in proto.graph.input}
            for t in proto.graph.initializer:
                if t.name not in present:
                    proto.graph.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        if not include_initializers:
            del proto.graph.initializer[:]
        if hasattr(destination, "write"):
            destination.write(proto.SerializeToString())
        elif large:
            path = os.fspath(destination)
            onnx.save_model(proto, path, save_as_external_data=True, all_tensors_to_one_file=True,
                            location=os.path.basename(path) + ".data", size_threshold=0)
        else:
            onnx.save_model(proto, os.fspath(destination))

    def apply_weights(self, state_dict):
        """Replaces the weights named in `state_dict` (state_dict names, as the model's initializers have
        them); a name the model does not have is skipped with a warning."""
        ir = _ir()
        model = self.model
        for name, tensor in state_dict.items():
            if name in model.graph.initializers:
                model.graph.initializers[name].const_value = ir.tensor(_to_numpy(tensor), name=name)
            else:
                warnings.warn(f"Weight '{name}' not found in the model. Skipped applying.",
                              category=_exporter_warning(), stacklevel=2)

    def optimize(self):
        """Optimizes the model in place with onnxscript's optimizer (constant folding, redundancies), as
        torch.onnx's optimize() does."""
        import onnxscript

        self._model = onnxscript.optimizer.optimize(self.model)

    def rename_axes(self, rename_mapping):
        """Renames symbolic dims: {old name (or an onnx_ir SymbolicDim): new name}."""
        ir = _ir()
        mapping = {str(k): v for k, v in rename_mapping.items()}
        model = self.model
        values = list(model.graph.inputs) + list(model.graph.outputs)
        for node in model.graph.all_nodes():
            values += list(node.outputs)
        for v in values:
            if v.shape is None:
                continue
            dims = [ir.SymbolicDim(mapping[str(d)]) if isinstance(d, ir.SymbolicDim) and str(d) in mapping else d
                    for d in v.shape]
            if dims != list(v.shape):
                v.shape = ir.Shape(dims)

    def __repr__(self):
        if self._model is not None:
            text = str(self._model)
        else:
            import onnx.printer

            text = onnx.printer.to_text(self._proto_of_bytes().graph)
        return (f"ONNXProgram(\n    model=\n{textwrap.indent(text, ' ' * 8)}\n    ,\n    exported_program=\n"
                f"{textwrap.indent(str(self.exported_program), ' ' * 8)}\n)\n")


def _exporter_warning():
    errors = getattr(getattr(torch, "onnx", None), "errors", None)
    return getattr(errors, "OnnxExporterWarning", UserWarning)
