"""Hugging Face transformers models from small configs (issue 38), weights re-drawn so that attention is not
near-uniform (a dropped mask or a wrong rotation cannot still match), inputs with left padding.

Each case builds (model, inputs(batch, seq, past) -> (args, kwargs), dynamic_shapes, dynamic_axes, input_names):
encoders take input_ids / attention_mask; decoders with a cache take one decoding step through Step (the cache as
flat tensors k0, v0, k1, v1 ..., rebuilt into a DynamicCache inside forward); audio takes raw samples; vision takes
pixel_values (dynamic batch only); seq2seq takes input_ids / attention_mask / decoder_input_ids (the third size is
the decoder's length), or input_features / decoder_input_ids (Whisper: the frames are fixed by the model).
"""
import torch
import transformers as T
from transformers import DynamicCache

Dim = torch.export.Dim
COMMON = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
              max_position_embeddings=128)
# (batch, seq, past) per kind; for seq2seq the third is the decoder's length, vision reads only the batch.
SIZES = {"encoder": [(2, 16, 0), (3, 9, 0), (1, 30, 0)], "audio": [(2, 16, 0), (3, 9, 0), (1, 30, 0)],
         "decoder": [(2, 3, 5), (3, 1, 7), (1, 4, 2)], "vision": [(2, 0, 0), (3, 0, 0), (1, 0, 0)],
         "seq2seq": [(2, 16, 5), (3, 9, 1), (1, 30, 7)]}


def redraw(model, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.copy_(torch.randn(p.shape, generator=g) * 0.2)
            elif "norm" not in name.lower():
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    return model.eval()


def _ids_mask(b, s, extra=0):
    g = torch.Generator().manual_seed(b * 1000 + s * 10 + extra)
    ids = torch.randint(0, 100, (b, s), generator=g)
    mask = torch.ones(b, s + extra, dtype=torch.long)
    mask[0, : (s + extra) // 3] = 0  # left padding on the first row
    return ids, mask, g


def kv_layout(cfg):
    """(heads, head_dim) of one layer's keys / values in the DynamicCache, laid out (batch, heads, past, head_dim)."""
    heads = cfg.num_attention_heads
    kv = getattr(cfg, "num_key_value_heads", None) or heads
    if cfg.model_type == "falcon":  # new architecture: keys broadcast to every head; multi-query: one
        kv = heads if cfg.new_decoder_architecture else 1 if cfg.multi_query else cfg.num_kv_heads
    return kv, getattr(cfg, "head_dim", None) or cfg.hidden_size // heads


class Case:
    """kind: encoder, audio, decoder, vision (opts: image=(channels, h, w)), seq2seq (opts: features=(mels, frames)
    for an audio encoder)."""

    def __init__(self, name, build, kind="encoder", **opts):
        self.name, self.build, self.kind, self.opts = name, build, kind, opts

    def make(self):
        return getattr(self, "_" + self.kind)(self.build())

    def _encoder(self, model):
        def inputs(b, s, p=0):
            ids, mask, _ = _ids_mask(b, s)
            return (), {"input_ids": ids, "attention_mask": mask}
        shapes = {"input_ids": {0: Dim("batch"), 1: Dim("seq")}, "attention_mask": {0: Dim("batch"), 1: Dim("seq")}}
        axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
        return model, inputs, shapes, axes, ["input_ids", "attention_mask"]

    def _audio(self, model):
        def inputs(b, s, p=0):
            return (torch.randn(b, s * 40, generator=torch.Generator().manual_seed(b + s)),), {}
        return model, inputs, ({0: Dim("batch"), 1: Dim("samples")},), {"input_values": {0: "batch", 1: "samples"}}, \
            ["input_values"]

    def _vision(self, model):
        image = self.opts.get("image", (3, 32, 32))

        def inputs(b, s=0, p=0):
            return (), {"pixel_values": torch.randn(b, *image, generator=torch.Generator().manual_seed(b))}
        return model, inputs, {"pixel_values": {0: Dim("batch")}}, {"pixel_values": {0: "batch"}}, ["pixel_values"]

    def _seq2seq(self, model):
        features = self.opts.get("features")  # (mels, frames): the encoder reads a fixed-length spectrogram
        batch, dec = Dim("batch"), Dim("dec")

        def inputs(b, s, p):
            ids, mask, g = _ids_mask(b, s)
            decoder_ids = torch.randint(0, 100, (b, p), generator=g)
            if features:
                return (), {"input_features": torch.randn(b, *features, generator=g), "decoder_input_ids": decoder_ids}
            return (), {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": decoder_ids}
        if features:
            shapes = {"input_features": {0: batch}, "decoder_input_ids": {0: batch, 1: dec}}
            axes = {"input_features": {0: "batch"}, "decoder_input_ids": {0: "batch", 1: "dec"}}
        else:
            seq = Dim("seq")
            shapes = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq},
                      "decoder_input_ids": {0: batch, 1: dec}}
            axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                    "decoder_input_ids": {0: "batch", 1: "dec"}}
        return model, inputs, shapes, axes, list(shapes)

    def _decoder(self, model):
        step = Step(model).eval()  # the exporter restores the wrapper's mode on the whole tree (dropout)
        layers = model.config.num_hidden_layers
        heads, dim = kv_layout(model.config)

        def inputs(b, s, p):
            ids, mask, g = _ids_mask(b, s, p)
            return (ids, mask, [torch.randn(b, heads, p, dim, generator=g) for _ in range(2 * layers)]), {}
        batch = Dim("batch")
        shapes = ({0: batch, 1: Dim("seq")}, {0: batch, 1: Dim("total")}, [{0: batch, 2: Dim("past")}] * (2 * layers))
        names = ["input_ids", "attention_mask"] + [f"past.{i}" for i in range(2 * layers)]
        axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
                **{n: {0: "batch", 2: "past"} for n in names[2:]}}
        return step, inputs, shapes, axes, names


class Step(torch.nn.Module):
    """One decoding step with a KV cache as flat tensors; returns the logits and the new cache, flat."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, past):
        cache = DynamicCache(config=self.model.config)
        for i in range(len(past) // 2):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
        present = []
        for layer in out.past_key_values.layers:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


def _model(config_cls, model_cls, **cfg):
    return lambda: redraw(model_cls(config_cls(**cfg)))


def _decoder(config_cls, model_cls, **cfg):
    return _model(config_cls, model_cls, **{**COMMON, "num_key_value_heads": 2, "head_dim": 8, **cfg})


def _gpt(config_cls, model_cls, **cfg):  # GPT-2's names: n_embd, n_layer, n_head, n_positions, n_inner
    return _model(config_cls, model_cls, vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=128, **cfg)


_VIT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32,
            patch_size=8)
_SEQ2SEQ = dict(vocab_size=100, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, use_cache=False,
                pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)

CASES = [
    Case("bert", lambda: redraw(T.BertModel(T.BertConfig(**COMMON)))),
    Case("distilbert", lambda: redraw(T.DistilBertModel(T.DistilBertConfig(
        vocab_size=100, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=128)))),
    Case("albert", lambda: redraw(T.AlbertModel(T.AlbertConfig(embedding_size=16, **COMMON)))),
    Case("electra", lambda: redraw(T.ElectraModel(T.ElectraConfig(embedding_size=16, **COMMON)))),
    Case("deberta-v2", lambda: redraw(T.DebertaV2Model(T.DebertaV2Config(**COMMON)))),
    Case("gpt-neo", lambda: redraw(T.GPTNeoModel(T.GPTNeoConfig(
        vocab_size=100, hidden_size=32, num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]],
        max_position_embeddings=128, window_size=8, use_cache=False)))),
    Case("clip-text", lambda: redraw(T.CLIPTextModel(T.CLIPTextConfig(
        **{**COMMON, "max_position_embeddings": 64}, projection_dim=16)))),
    Case("wav2vec2", lambda: redraw(T.Wav2Vec2Model(T.Wav2Vec2Config(
        vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4, do_stable_layer_norm=True))), kind="audio"),
    Case("llama+cache", _decoder(T.LlamaConfig, T.LlamaForCausalLM), kind="decoder"),
    Case("mistral+cache", _decoder(T.MistralConfig, T.MistralForCausalLM, sliding_window=8), kind="decoder"),
    Case("gemma2+cache", _decoder(T.Gemma2Config, T.Gemma2ForCausalLM, sliding_window=8), kind="decoder"),
    Case("gemma3+cache", _decoder(T.Gemma3TextConfig, T.Gemma3ForCausalLM, sliding_window=8), kind="decoder"),
    # encoders
    Case("roberta", _model(T.RobertaConfig, T.RobertaModel, **COMMON)),
    Case("xlm-roberta", _model(T.XLMRobertaConfig, T.XLMRobertaModel, **COMMON)),
    Case("mpnet", _model(T.MPNetConfig, T.MPNetModel, **COMMON)),
    Case("modernbert", _model(T.ModernBertConfig, T.ModernBertModel, **COMMON, global_attn_every_n_layers=2,
                              local_attention=8, pad_token_id=0, bos_token_id=1, eos_token_id=2, cls_token_id=1,
                              sep_token_id=2)),
    # decoders stepping with a KV cache
    Case("gpt2+cache", _gpt(T.GPT2Config, T.GPT2LMHeadModel, n_inner=64), kind="decoder"),
    Case("gptj+cache", _gpt(T.GPTJConfig, T.GPTJForCausalLM, n_inner=64, rotary_dim=4), kind="decoder"),
    Case("opt+cache", _model(T.OPTConfig, T.OPTForCausalLM, **COMMON, ffn_dim=64, word_embed_proj_dim=32),
         kind="decoder"),
    Case("bloom+cache", _model(T.BloomConfig, T.BloomForCausalLM, vocab_size=100, hidden_size=32, n_layer=2,
                               n_head=4), kind="decoder"),
    Case("falcon+cache", _model(T.FalconConfig, T.FalconForCausalLM, **COMMON, ffn_hidden_size=64,
                                bos_token_id=1, eos_token_id=2), kind="decoder"),  # multi-query: one KV head
    Case("qwen2+cache", _decoder(T.Qwen2Config, T.Qwen2ForCausalLM), kind="decoder"),
    Case("qwen3+cache", _decoder(T.Qwen3Config, T.Qwen3ForCausalLM), kind="decoder"),
    Case("phi3+cache", _decoder(T.Phi3Config, T.Phi3ForCausalLM, partial_rotary_factor=0.5, pad_token_id=0,
                                bos_token_id=1, eos_token_id=2), kind="decoder"),
    Case("gemma+cache", _decoder(T.GemmaConfig, T.GemmaForCausalLM), kind="decoder"),
    # mixtures of experts, stepping with a KV cache
    Case("mixtral+cache", _decoder(T.MixtralConfig, T.MixtralForCausalLM, num_local_experts=4,
                                   num_experts_per_tok=2), kind="decoder"),
    Case("qwen2-moe+cache", _decoder(T.Qwen2MoeConfig, T.Qwen2MoeForCausalLM, num_experts=4, num_experts_per_tok=2,
                                     moe_intermediate_size=32, shared_expert_intermediate_size=64), kind="decoder"),
    # vision: pixel_values (batch, 3, 32, 32)
    Case("vit", _model(T.ViTConfig, T.ViTModel, **_VIT), kind="vision"),
    Case("deit", _model(T.DeiTConfig, T.DeiTModel, **_VIT), kind="vision"),
    Case("swin", _model(T.SwinConfig, T.SwinModel, image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
                        num_heads=[2, 4], window_size=4), kind="vision"),
    Case("convnext", _model(T.ConvNextConfig, T.ConvNextModel, image_size=32, patch_size=4, num_stages=2,
                            hidden_sizes=[16, 32], depths=[1, 1]), kind="vision"),
    Case("beit", _model(T.BeitConfig, T.BeitModel, **_VIT, use_relative_position_bias=True), kind="vision"),
    Case("dinov2", _model(T.Dinov2Config, T.Dinov2Model, **_VIT), kind="vision"),
    Case("segformer", _model(T.SegformerConfig, T.SegformerModel, num_encoder_blocks=2, depths=[1, 1],
                             sr_ratios=[2, 1], hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2],
                             num_attention_heads=[1, 2], mlp_ratios=[2, 2]), kind="vision"),
    Case("clip-vision", _model(T.CLIPVisionConfig, T.CLIPVisionModel, **_VIT), kind="vision"),
    # encoder-decoders, plain forward (no cache)
    Case("t5", _model(T.T5Config, T.T5Model, vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                      use_cache=False, decoder_start_token_id=0), kind="seq2seq"),
    Case("bart", _model(T.BartConfig, T.BartModel, **_SEQ2SEQ, max_position_embeddings=128), kind="seq2seq"),
    Case("whisper", _model(T.WhisperConfig, T.WhisperModel, **_SEQ2SEQ, num_mel_bins=8, max_source_positions=16,
                           max_target_positions=64), kind="seq2seq", features=(8, 32)),
]
# In `make test`: one of each kind, and the cases issue 38 found refused on the dynamo path.
SAMPLE = ["bert", "gpt-neo", "wav2vec2", "mistral+cache"]
