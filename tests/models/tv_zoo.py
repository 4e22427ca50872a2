"""The torchvision 0.14 model zoo: every classification, segmentation and video
model, random weights (nothing downloaded), BatchNorm statistics calibrated on
random data, at input sizes small enough for tests.

MODELS: name -> function returning (module in eval mode, example args).
FAMILIES: family -> its representative model (the one `make test` runs; the
others run in `make test-zoo`).
"""
import torch
import torchvision.models as tvm
import torchvision.models.segmentation as seg
import torchvision.models.video as video

import zoo

# Input size per model: the smallest that is comfortably valid for its architecture.
_SIZE = {
    "inception_v3": 299,  # its auxiliary classifier (run while calibrating) needs the full size
    "googlenet": 64,
    "maxvit_t": 224,  # each stage's size must divide by the partition size 7: 224 / 32 = 7
    "squeezenet1_0": 64,
    "squeezenet1_1": 64,
}
_VIT_SIZE = 64  # ViTs are built for this image size (divisible by the patch sizes 14, 16, 32)
# BatchNorm statistics are calibrated on this many random images: at 64x64 the last stages of a classifier see
# 2x2 values per channel and image, too few for stable statistics with the example's batch of 1 or 2.
_CALIBRATION_BATCH = 16


def _calibration(args, batch=_CALIBRATION_BATCH):
    return tuple(torch.empty((batch,) + tuple(t.shape[1:])) for t in args)


def _classifier(name):
    def build():
        torch.manual_seed(0)
        kwargs = {}
        if name.startswith("vit_"):
            patch = int(name.split("_")[-1])
            kwargs["image_size"] = _VIT_SIZE if _VIT_SIZE % patch == 0 else patch * 4
        if name == "maxvit_t":
            kwargs["input_size"] = (_SIZE[name], _SIZE[name])
        if name in ("inception_v3", "googlenet"):
            kwargs["init_weights"] = True
        model = getattr(tvm, name)(**kwargs)
        size = kwargs.get("image_size", _SIZE.get(name, 64))
        args = (torch.randn(1 if size > 128 else 2, 3, size, size),)
        return zoo._randomize_bn(model, args, _calibration(args, 4 if size > 128 else _CALIBRATION_BATCH)), args

    return build


def _segmenter(name):
    def build():
        torch.manual_seed(0)
        model = getattr(seg, name)(weights=None, weights_backbone=None, num_classes=5,
                                   **({} if name.startswith("lraspp") else {"aux_loss": True}))
        args = (torch.randn(2, 3, 64, 64),)
        return zoo._randomize_bn(model, args, _calibration(args)), args

    return build


def _video(name):
    def build():
        torch.manual_seed(0)
        if name.startswith("mvit"):  # MViTs fix their clip size (16 frames of 224x224)
            frames, size = 16, 224
            model = getattr(video, name)()
        elif name == "s3d":  # its head pools a (2, 7, 7) window: the clip must keep that much after stride 32
            frames, size = 16, 224
            model = getattr(video, name)()
        else:
            frames, size = 8, 64
            model = getattr(video, name)()
        args = (torch.randn(1, 3, frames, size, size),)
        return zoo._randomize_bn(model, args), args

    return build


MODELS = {}
for _n in tvm.list_models(module=tvm):
    MODELS[_n] = _classifier(_n)
for _n in tvm.list_models(module=seg):
    MODELS[_n] = _segmenter(_n)
for _n in tvm.list_models(module=video):
    MODELS[_n] = _video(_n)


def family(name):
    for prefix in ("efficientnet_v2", "efficientnet", "mobilenet_v3", "mobilenet_v2", "regnet_x", "regnet_y",
                   "shufflenet", "squeezenet", "resnext", "wide_resnet", "resnet", "densenet", "convnext", "vgg",
                   "vit", "swin_v2", "swin", "mnasnet", "maxvit", "googlenet", "inception", "alexnet", "fcn",
                   "deeplabv3", "lraspp"):
        if name.startswith(prefix):
            return prefix + ("_bn" if prefix == "vgg" and name.endswith("_bn") else "")
    return name  # video models: one family each


# The representative of each family (tested by `make test`).
FAMILIES = {
    "alexnet": "alexnet", "convnext": "convnext_tiny", "densenet": "densenet121", "efficientnet": "efficientnet_b0",
    "efficientnet_v2": "efficientnet_v2_s", "googlenet": "googlenet", "inception": "inception_v3",
    "maxvit": "maxvit_t", "mnasnet": "mnasnet0_5", "mobilenet_v2": "mobilenet_v2",
    "mobilenet_v3": "mobilenet_v3_small", "regnet_x": "regnet_x_400mf", "regnet_y": "regnet_y_400mf",
    "resnet": "resnet18", "resnext": "resnext50_32x4d", "shufflenet": "shufflenet_v2_x0_5",
    "squeezenet": "squeezenet1_1", "swin": "swin_t", "swin_v2": "swin_v2_t", "vgg": "vgg11", "vgg_bn": "vgg11_bn",
    "vit": "vit_b_32", "wide_resnet": "wide_resnet50_2", "fcn": "fcn_resnet50",
    "deeplabv3": "deeplabv3_mobilenet_v3_large", "lraspp": "lraspp_mobilenet_v3_large", "r3d_18": "r3d_18",
    "mc3_18": "mc3_18", "r2plus1d_18": "r2plus1d_18", "s3d": "s3d",
}  # mvit_v1_b and mvit_v2_s run in make test-zoo only


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--cmake"]:  # "model:label;..." for tests/CMakeLists.txt
        reps = set(FAMILIES.values())
        print(";".join(f"{m}:{'zoo' if m in reps else 'zoo-full'}" for m in sorted(MODELS)))
