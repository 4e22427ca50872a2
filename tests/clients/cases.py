"""The cases of `make test-clients`, as plain data (the driver reads them
without importing torch).

optimum: (name, model_type, task, config kwargs, image processor or None). Each model is built from
`AutoConfig.for_model(model_type, **kwargs)` with random weights (see
optimum_worker.py) and exported by optimum's `main_export` for the task.
ultralytics: (name, yaml, imgsz, dynamic, simplify).
"""

# Shared small sizes.
_ENC = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            vocab_size=128, max_position_embeddings=64)
_DEC = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            vocab_size=128, max_position_embeddings=64)
_S2S = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=128,
            max_position_embeddings=64)
_VIT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            image_size=32, patch_size=8, num_labels=5)

_CONFIGS = {
    "bert": dict(_ENC),
    "roberta": dict(_ENC, pad_token_id=1),
    "albert": dict(_ENC, embedding_size=16),
    "xlm-roberta": dict(_ENC, pad_token_id=1),
    # the DeBERTa-v3 attention: relative positions in log buckets, shared keys, p2c + c2p
    "deberta-v2": dict(_ENC, relative_attention=True, position_buckets=16, max_relative_positions=-1,
                       pos_att_type=["p2c", "c2p"], share_att_key=True, norm_rel_ebd="layer_norm",
                       position_biased_input=False),
    "distilbert": dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=128,
                       max_position_embeddings=64),
    "electra": dict(_ENC, embedding_size=32),
    "gpt2": dict(n_embd=32, n_layer=2, n_head=4, vocab_size=128, n_positions=64,
                 bos_token_id=1, eos_token_id=2),
    "llama": dict(_DEC, num_key_value_heads=2),
    "mistral": dict(_DEC, num_key_value_heads=2),
    "qwen2": dict(_DEC, num_key_value_heads=2),
    "qwen3": dict(_DEC, num_key_value_heads=2, head_dim=8),
    "phi": dict(_DEC, partial_rotary_factor=0.5, bos_token_id=1, eos_token_id=2),
    "phi3": dict(_DEC, num_key_value_heads=2, pad_token_id=0, bos_token_id=1, eos_token_id=2),
    "gemma": dict(_DEC, num_key_value_heads=1, head_dim=8),
    "gemma2": dict(_DEC, num_key_value_heads=2, head_dim=8, query_pre_attn_scalar=8, sliding_window=8),
    "opt": dict(hidden_size=32, ffn_dim=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=128,
                max_position_embeddings=64, word_embed_proj_dim=32),
    "bloom": dict(hidden_size=32, n_layer=2, n_head=4, vocab_size=128, bos_token_id=1, eos_token_id=2,
                  pad_token_id=3),
    "falcon": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, vocab_size=128,
                   bos_token_id=1, eos_token_id=2),
    "gpt_neox": dict(_DEC, bos_token_id=1, eos_token_id=2),
    "gptj": dict(n_embd=32, n_layer=2, n_head=4, rotary_dim=4, vocab_size=128, n_positions=64,
                 bos_token_id=1, eos_token_id=2),
    "t5": dict(d_model=32, d_ff=64, d_kv=8, num_layers=2, num_decoder_layers=2, num_heads=4, vocab_size=128,
               relative_attention_num_buckets=8, relative_attention_max_distance=16),
    "bart": dict(_S2S),
    "marian": dict(_S2S, pad_token_id=3, decoder_start_token_id=3, eos_token_id=2, bos_token_id=1,
                   forced_eos_token_id=2, decoder_vocab_size=128),
    "whisper": dict(_S2S, num_mel_bins=80, max_source_positions=1500, max_target_positions=64,
                    pad_token_id=1, bos_token_id=2, eos_token_id=2, decoder_start_token_id=3,
                    suppress_tokens=None, begin_suppress_tokens=None),
    "vit": dict(_VIT),
    "beit": dict(_VIT, use_relative_position_bias=True, use_mean_pooling=True),
    "deit": dict(_VIT, architectures=["DeiTForImageClassification"]),
    "dinov2": dict(_VIT),
    "convnext": dict(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], image_size=32, num_labels=5),
    "swin": dict(embed_dim=16, depths=[1, 1], num_heads=[2, 4], window_size=4, image_size=32, patch_size=4,
                 num_labels=5),
    "resnet": dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic",
                   num_labels=5),
    "segformer": dict(hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1], num_attention_heads=[1, 1, 2, 2],
                      decoder_hidden_size=32, num_labels=5),
}

_OPTIMUM_PAIRS = [
    # encoders
    ("bert", "feature-extraction"),
    ("bert", "text-classification"),
    ("bert", "question-answering"),
    ("roberta", "fill-mask"),
    ("roberta", "token-classification"),
    ("albert", "text-classification"),
    ("xlm-roberta", "feature-extraction"),
    ("deberta-v2", "fill-mask"),
    ("deberta-v2", "question-answering"),
    ("distilbert", "text-classification"),
    ("distilbert", "token-classification"),
    ("electra", "question-answering"),
    ("electra", "fill-mask"),
    # decoders
    ("gpt2", "text-generation-with-past"),
    ("gpt2", "text-generation"),
    ("gpt2", "text-classification"),
    ("llama", "text-generation-with-past"),
    ("llama", "text-generation"),
    ("llama", "text-classification"),
    ("mistral", "text-generation-with-past"),
    ("qwen2", "text-generation-with-past"),
    ("qwen3", "text-generation-with-past"),
    ("phi", "text-generation-with-past"),
    ("phi3", "text-generation-with-past"),
    ("gemma", "text-generation-with-past"),
    ("gemma2", "text-generation-with-past"),
    ("opt", "text-generation-with-past"),
    ("bloom", "text-generation-with-past"),
    ("falcon", "text-generation-with-past"),
    ("gpt_neox", "text-generation-with-past"),
    ("gptj", "text-generation-with-past"),
    # encoder-decoders
    ("t5", "text2text-generation-with-past"),
    ("t5", "text2text-generation"),
    ("bart", "text2text-generation-with-past"),
    ("marian", "text2text-generation-with-past"),
    ("whisper", "automatic-speech-recognition-with-past"),
    # vision
    ("vit", "image-classification"),
    ("beit", "image-classification"),
    ("deit", "image-classification"),
    ("dinov2", "image-classification"),
    ("convnext", "image-classification"),
    ("swin", "image-classification"),
    ("resnet", "image-classification"),
    ("segformer", "semantic-segmentation"),
]

# Image processors saved with the model (main_export loads what is there;
# DINOv2's dummy input generator takes its size from the processor's crop:
# 48 px on 32 px position embeddings, so they are interpolated, as
# DINOv2's 224 px crops on 518 px embeddings are).
_VIT_PROCESSOR = ("ViTImageProcessor", dict(size={"height": 32, "width": 32}))
_PROCESSORS = {
    "vit": _VIT_PROCESSOR, "beit": _VIT_PROCESSOR, "deit": _VIT_PROCESSOR, "swin": _VIT_PROCESSOR,
    "dinov2": ("BitImageProcessor", dict(size={"shortest_edge": 48}, crop_size={"height": 48, "width": 48})),
    "convnext": ("ConvNextImageProcessor", dict(size={"shortest_edge": 32})),
}

OPTIMUM = [(f"{mt}/{task}", mt, task, _CONFIGS[mt], _PROCESSORS.get(mt)) for mt, task in _OPTIMUM_PAIRS]

_YOLO = [
    # (yaml, imgsz)
    ("yolo11n.yaml", 96),
    ("yolo11n-seg.yaml", 96),
    ("yolo11n-pose.yaml", 96),
    ("yolo11n-obb.yaml", 96),
    ("yolo11n-cls.yaml", 64),
    ("yolov8n.yaml", 96),
    ("yolov10n.yaml", 96),
    ("yolo26n.yaml", 96),
    ("yolo26n-seg.yaml", 96),
    ("rtdetr-l.yaml", 160),
]

ULTRALYTICS = []
for _yaml, _imgsz in _YOLO:
    for _dynamic in (False, True):
        for _simplify in (False, True):
            _name = _yaml[:-5] + "/" + ("dynamic" if _dynamic else "static") + ("+simplify" if _simplify else "")
            ULTRALYTICS.append((_name, _yaml, _imgsz, _dynamic, _simplify))

CLIENTS = {"optimum": OPTIMUM, "ultralytics": ULTRALYTICS}
