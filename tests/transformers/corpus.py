"""Hugging Face transformers models from small configs (issue 38), weights re-drawn so that attention is not
near-uniform (a dropped mask or a wrong rotation cannot still match), inputs with left padding.

Each case builds (model, inputs(batch, seq, past) -> (args, kwargs), dynamic_shapes, dynamic_axes, input_names):
encoders take input_ids / attention_mask; decoders with a cache take one decoding step through Step (the cache as
flat tensors k0, v0, k1, v1 ..., rebuilt into a DynamicCache inside forward); audio takes raw samples.
"""
import torch
import transformers as T
from transformers import DynamicCache

Dim = torch.export.Dim
COMMON = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
              max_position_embeddings=128)


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


class Case:
    def __init__(self, name, build, kind="encoder"):
        self.name, self.build, self.kind = name, build, kind

    def make(self):
        model = self.build()
        if self.kind == "encoder":
            def inputs(b, s, p=0):
                ids, mask, _ = _ids_mask(b, s)
                return (), {"input_ids": ids, "attention_mask": mask}
            shapes = {"input_ids": {0: Dim("batch"), 1: Dim("seq")}, "attention_mask": {0: Dim("batch"), 1: Dim("seq")}}
            axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
            return model, inputs, shapes, axes, ["input_ids", "attention_mask"]
        if self.kind == "audio":
            def inputs(b, s, p=0):
                return (torch.randn(b, s * 40, generator=torch.Generator().manual_seed(b + s)),), {}
            return model, inputs, ({0: Dim("batch"), 1: Dim("samples")},), {"input_values": {0: "batch", 1: "samples"}}, \
                ["input_values"]
        step = Step(model)
        cfg, layers = model.config, model.config.num_hidden_layers
        heads, dim = cfg.num_key_value_heads, cfg.head_dim

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


def _decoder(config_cls, model_cls, **cfg):
    return lambda: redraw(model_cls(config_cls(**{**COMMON, "num_key_value_heads": 2, "head_dim": 8, **cfg})))


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
]
# In `make test`: one of each kind, and the cases issue 38 found refused on the dynamo path.
SAMPLE = ["bert", "gpt-neo", "wav2vec2", "mistral+cache"]
