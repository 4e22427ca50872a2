"""Tensor operations that export to shape computations (torch.onnx.operators)."""
import torch

__all__ = ["shape_as_tensor", "reshape_from_tensor_shape"]


def shape_as_tensor(x):
    """x's shape as a 1-D int64 tensor that stays a computation (ONNX Shape) when exported."""
    return torch._shape_as_tensor(x)


def reshape_from_tensor_shape(x, shape):
    """x reshaped to the shape held by the 1-D tensor `shape` (ONNX Reshape)."""
    return torch._reshape_from_tensor(x, shape)
