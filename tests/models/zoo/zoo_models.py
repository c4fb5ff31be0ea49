"""The model zoo: networks from the families users bring, built with seeded
weights and calibrated BatchNorm statistics, at the smallest input their
architecture allows, so the suite can afford to compile and run them all.

Each entry is (constructor, input shape, seed). The torchvision networks are
the library's own definitions at their published widths and depths; only the
image size is small (adaptive pooling makes the classifier independent of
it). The Vision Transformer is torchvision's VisionTransformer class with a
small configuration (its published ones fix the image at 224 and take 12
layers of 768 wide), and the GPT-2-style block and the encoder layer are the
transformer blocks as exporters see them.
"""

import math

import torch
import torchvision


class CausalDecoderBlock(torch.nn.Module):
    """A GPT-2 block: pre-LayerNorm causal self-attention and a GELU (tanh)
    MLP, each with a residual. The causal mask is a registered buffer cut to
    the sequence length, as GPT-2 writes it, and the head split comes from
    the input's shape (shape arithmetic in the export)."""

    def __init__(self, d=128, heads=4, max_seq=64):
        super().__init__()
        self.heads = heads
        self.ln_1 = torch.nn.LayerNorm(d)
        self.c_attn = torch.nn.Linear(d, 3 * d)
        self.c_proj = torch.nn.Linear(d, d)
        self.ln_2 = torch.nn.LayerNorm(d)
        self.c_fc = torch.nn.Linear(d, 4 * d)
        self.mlp_proj = torch.nn.Linear(4 * d, d)
        self.register_buffer("bias", torch.tril(torch.ones(max_seq, max_seq))
                             .view(1, 1, max_seq, max_seq))

    def attention(self, x):
        b, t, d = x.size()
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for y in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        scores = scores.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, d))

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        h = torch.nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(h)


def small_vit():
    vit = torchvision.models.VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
        mlp_dim=128, num_classes=10)
    # torchvision starts the classifier at zero (for fine-tuning), which
    # would make every output 0.
    torch.nn.init.normal_(vit.heads.head.weight, std=0.2)
    return vit


def encoder_layer():
    # Sequence first, as torch.nn.TransformerEncoderLayer defaults.
    return torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128)


def tv(name, **kwargs):
    return lambda: getattr(torchvision.models, name)(weights=None, **kwargs)


# name -> (constructor, input shape); every one is exported under no_grad,
# as for inference.
MODELS = {
    "resnet18": (tv("resnet18"), (1, 3, 64, 64)),
    "densenet121": (tv("densenet121"), (1, 3, 64, 64)),
    "shufflenet_v2_x0_5": (tv("shufflenet_v2_x0_5"), (1, 3, 64, 64)),
    "efficientnet_b0": (tv("efficientnet_b0"), (1, 3, 64, 64)),
    "regnet_y_400mf": (tv("regnet_y_400mf"), (1, 3, 64, 64)),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), (1, 3, 64, 64)),
    "squeezenet1_1": (tv("squeezenet1_1"), (1, 3, 64, 64)),
    "googlenet": (tv("googlenet", aux_logits=False, init_weights=True), (1, 3, 64, 64)),
    "convnext_tiny": (tv("convnext_tiny"), (1, 3, 64, 64)),
    "vit": (small_vit, (1, 3, 32, 32)),
    "gpt2_block": (CausalDecoderBlock, (1, 32, 128)),
    "transformer_encoder": (encoder_layer, (32, 1, 64)),
}


def calibrate_batchnorm(model, shape, batches=2, batch_size=4):
    """Set BatchNorm running statistics to those of random inputs.

    With freshly initialised statistics (mean 0, variance 1) the activations
    of a random MobileNetV2 shrink to ~1e-9 at the output, where any engine
    passes an atol of 1e-4. Calibrated statistics keep them near unit scale,
    as in a trained network, so the output check means something. (The
    bench's exports use this too.)
    """
    norms = [m for m in model.modules()
             if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch_size, *shape[1:]))


def build(name, seed=0):
    """The model in eval mode with weights drawn from a per-model seed, and
    a seeded input."""
    constructor, shape = MODELS[name]
    torch.manual_seed(seed + sorted(MODELS).index(name))
    model = constructor()
    calibrate_batchnorm(model, shape)
    model.eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed + 100))
    return model, x


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["--list"]:  # the suite's CMake reads the names
        print(" ".join(MODELS))
    else:
        sys.exit("usage: zoo_models.py --list")
