"""The models torch2onnx is tested on: builders with seeded random weights and
example args. Nothing is downloaded (torchvision builds without weights=).

Each entry: name -> function returning (module in eval mode, example args tuple).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _seed(n=0):
    torch.manual_seed(n)


# --------------------------------------------------------------------- DCGAN
# The generator and discriminator of the PyTorch DCGAN example (nz=100, ngf=ndf=64, nc=3).
class DCGANGenerator(nn.Module):
    def __init__(self, nz=100, ngf=64, nc=3):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 8),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, x):
        return self.main(x)


class DCGANDiscriminator(nn.Module):
    def __init__(self, nc=3, ndf=64):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 4),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def _randomize_zero_weights(module):
    """torchvision zero-initializes some layers (ViT's head, residual branch
    scales): give those random values, or the model's output would not depend
    on the input at all."""
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() >= 1 and p.numel() > 1 and not name.endswith("bias") and not p.any():
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)


# Residual blocks whose branch ends in a BatchNorm (torchvision's ResNet, ResNeXt, wide ResNet, RegNet, video
# ResNets): trained networks keep that last scale small (torchvision's zero_init_residual makes it 0), and with
# random scales near 1 the branches of a 100-layer network add up to a function so steep that float32 itself
# differs from float64 by more than the comparison tolerance.
_RESIDUAL_BLOCKS = {"BasicBlock", "Bottleneck", "ResBottleneckBlock"}
_SKIP_PATHS = ("downsample", "proj")
_RESIDUAL_SCALE = 0.3


def _scale_residual_branches(module):
    for block in module.modules():
        if type(block).__name__ not in _RESIDUAL_BLOCKS:
            continue
        branch = [m for n, m in block.named_modules()
                  if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.affine and not n.startswith(_SKIP_PATHS)]
        if branch:
            branch[-1].weight.data.mul_(_RESIDUAL_SCALE)


def _randomize_bn(module, example=None, calibration=None):
    """Random BatchNorm affine parameters, and running statistics measured on
    random data (so eval-mode BN is neither an identity nor blows activations
    up through deep random networks). The statistics come from `calibration`
    (a tuple of inputs; pass a large batch for networks whose late layers see
    few values per channel) or else from random tensors shaped like `example`."""
    _randomize_zero_weights(module)
    g = torch.Generator().manual_seed(1)
    bns = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        if m.affine:
            m.weight.data.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
    _scale_residual_branches(module)
    if (example is not None or calibration is not None) and bns:
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batches
        module.train()
        with torch.no_grad():
            for _ in range(2):
                if calibration is not None:
                    module(*[torch.randn_like(t) for t in calibration])
                else:
                    module(*[torch.randn_like(t) if t.is_floating_point() else t for t in example])
        for m in bns:
            m.momentum = 0.1
    else:
        for m in bns:
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    return module.eval()


# --------------------------------------------------------- SuperResolution
# The super-resolution network of the PyTorch ONNX tutorial (ESPCN).
class SuperResolutionNet(nn.Module):
    def __init__(self, upscale_factor=3):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        return self.pixel_shuffle(self.conv4(x))


# ------------------------------------------------------- word language model
# The models of pytorch/examples word_language_model: an RNN (LSTM, GRU,
# RNN_TANH) and a Transformer variant.
class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ("LSTM", "GRU"):
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        if self.rnn_type == "LSTM":
            return (torch.randn(self.nlayers, bsz, self.nhid), torch.randn(self.nlayers, bsz, self.nhid))
        return torch.randn(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[: x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Module):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        encoder_layers = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, src, src_mask):
        src = self.encoder(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def causal_mask(sz):
    return torch.triu(torch.full((sz, sz), float("-inf")), diagonal=1)


# ----------------------------------------------------------------- registry
def _tv():
    import torchvision

    return torchvision.models


def alexnet():
    _seed()
    return _tv().alexnet().eval(), (torch.randn(2, 3, 224, 224),)


def vgg16():
    _seed()
    return _tv().vgg16().eval(), (torch.randn(1, 3, 224, 224),)


def _calibrated(model, args):
    return _randomize_bn(model, args), args


def resnet50():
    _seed()
    return _calibrated(_tv().resnet50(), (torch.randn(1, 3, 224, 224),))


def densenet121():
    _seed()
    return _calibrated(_tv().densenet121(), (torch.randn(1, 3, 224, 224),))


def inception_v3():
    _seed()
    m = _tv().inception_v3(init_weights=True, aux_logits=True)
    return _calibrated(m, (torch.randn(2, 3, 299, 299),))


def dcgan_generator():
    _seed()
    return _calibrated(DCGANGenerator(), (torch.randn(2, 100, 1, 1),))


def dcgan_discriminator():
    _seed()
    return _calibrated(DCGANDiscriminator(), (torch.randn(2, 3, 64, 64),))


def super_resolution():
    _seed()
    return SuperResolutionNet(upscale_factor=3).eval(), (torch.randn(1, 1, 224, 224),)


def _word_lm(rnn_type):
    _seed()
    ntoken, bsz, seq = 1000, 4, 12
    m = RNNModel(rnn_type, ntoken, 64, 64, 2).eval()
    tokens = torch.randint(0, ntoken, (seq, bsz))
    return m, (tokens, m.init_hidden(bsz))


def word_lm_lstm():
    return _word_lm("LSTM")


def word_lm_gru():
    return _word_lm("GRU")


def word_lm_rnn_tanh():
    return _word_lm("RNN_TANH")


def word_lm_transformer():
    _seed()
    ntoken, bsz, seq = 1000, 4, 12
    m = TransformerModel(ntoken, 64, 4, 128, 2).eval()
    tokens = torch.randint(0, ntoken, (seq, bsz))
    return m, (tokens, causal_mask(seq))


# ------------------------------------------------------------- 2.5 GiB model
# Past protobuf's 2 GiB (its weights go to ONNX external data); used by
# tests/scale and bench/, not listed in MODELS (too large for the model tests).
class Big(nn.Module):
    """Ten 8192x8192 float layers: 2.5 GiB of weights, past protobuf's 2 GiB."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8192, 8192, bias=False) for _ in range(10))
        g = torch.Generator().manual_seed(0)
        with torch.no_grad():
            for layer in self.layers:
                layer.weight.copy_(torch.randn(8192, 8192, generator=g) / 90.0)

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


MODELS = {
    "alexnet": alexnet,
    "dcgan_generator": dcgan_generator,
    "dcgan_discriminator": dcgan_discriminator,
    "densenet121": densenet121,
    "inception_v3": inception_v3,
    "resnet50": resnet50,
    "super_resolution": super_resolution,
    "vgg16": vgg16,
    "word_lm_lstm": word_lm_lstm,
    "word_lm_gru": word_lm_gru,
    "word_lm_rnn_tanh": word_lm_rnn_tanh,
    "word_lm_transformer": word_lm_transformer,
}
