#!/usr/bin/python3
"""Export the PyTorch bench models to ONNX for the Weir benchmark.

For each model NAME this writes, into --out (default build/bench/models):

  NAME.onnx        torch.onnx.export, opset 13, constant folding, eval mode,
                   fixed batch 1, random weights (BatchNorm statistics
                   calibrated on random inputs)
  NAME.pt          the same module (torch.save), for PyTorch eager timing
  NAME.input.npy   a fixed random input (float32, seeded)
  NAME.torch.npy   PyTorch eager's output on that input (under no_grad)

A model whose four files already exist is skipped, so running this again is
cheap. Run it with Debian's Python (/usr/bin/python3, python3-torch and
python3-torchvision).
"""

import argparse
import contextlib
import os
import sys

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models", "zoo"))
import zoo_models  # noqa: E402  (the suite's zoo: its GPT-2 block, BatchNorm calibration)

OPSET = 13
SEED = 0


class BertLayer(torch.nn.Module):
    """One BERT-base encoder layer (as in Hugging Face's BertLayer): d=768,
    12 heads, FFN 3072, GELU, post-LN. Written out rather than taken from
    torch.nn.TransformerEncoderLayer, whose export computes the head split
    from the input's shape at run time (Shape -> Gather -> Div -> Slice);
    here the shapes are the constants they are for a fixed sequence."""

    def __init__(self, d=768, heads=12, ffn=3072, seq=128):
        super().__init__()
        self.d, self.heads, self.seq = d, heads, seq
        self.q = torch.nn.Linear(d, d)
        self.k = torch.nn.Linear(d, d)
        self.v = torch.nn.Linear(d, d)
        self.out = torch.nn.Linear(d, d)
        self.norm1 = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, ffn)
        self.down = torch.nn.Linear(ffn, d)
        self.norm2 = torch.nn.LayerNorm(d)

    def split(self, x):
        return x.reshape(1, self.seq, self.heads, self.d // self.heads).transpose(1, 2)

    def forward(self, x):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = q @ k.transpose(2, 3) / (self.d // self.heads) ** 0.5
        context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(1, self.seq, self.d)
        h = self.norm1(x + self.out(context))
        return self.norm2(h + self.down(torch.nn.functional.gelu(self.up(h))))


def bert_layer():
    """One BERT-base encoder layer: d=768, 12 heads, FFN 3072, GELU, post-LN."""
    return BertLayer()


def transformer_encoder():
    """torch.nn.TransformerEncoderLayer as most people export it for
    inference (under no_grad, sequence first): its head split is computed
    from the input's shape at run time (Shape -> Gather -> Div -> Slice),
    which Weir folds at load."""
    return torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024)


class Gpt2Block(zoo_models.CausalDecoderBlock):
    """The zoo's GPT-2 block at GPT-2 small's width (768, 12 heads) over a
    128-token sequence; defined here so that torch.save records
    export_models.Gpt2Block, which torch_bench.py can import."""

    def __init__(self):
        super().__init__(d=768, heads=12, max_seq=128)


def vit_b_16():
    """ViT-B/16 with its classifier drawn at random: torchvision starts it
    at zero (for fine-tuning), which would make every output 0."""
    vit = torchvision.models.vit_b_16(weights=None)
    torch.nn.init.normal_(vit.heads.head.weight, std=0.02)
    return vit


# name -> (constructor, input shape)
MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224)),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), (1, 3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
    "bert": (bert_layer, (1, 128, 768)),
    # The zoo: families nobody tuned for (scale, hardening and coverage are
    # measured on them too).
    "densenet121": (lambda: torchvision.models.densenet121(weights=None), (1, 3, 224, 224)),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), (1, 3, 224, 224)),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(weights=None), (1, 3, 224, 224)),
    "squeezenet1_0": (lambda: torchvision.models.squeezenet1_0(weights=None), (1, 3, 224, 224)),
    "alexnet": (lambda: torchvision.models.alexnet(weights=None), (1, 3, 224, 224)),
    "googlenet": (lambda: torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True), (1, 3, 224, 224)),
    # Shape arithmetic as exporters write it: ShuffleNet's channel split, and
    # an encoder layer exported under no_grad (sequence 64, batch 1).
    "shufflenet_v2": (lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), (1, 3, 224, 224)),
    "transformer_encoder": (transformer_encoder, (64, 1, 256)),
    # The rest of the suite's zoo families (tests/models/zoo), at the sizes
    # they are published in.
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(weights=None), (1, 3, 224, 224)),
    "convnext_tiny": (lambda: torchvision.models.convnext_tiny(weights=None), (1, 3, 224, 224)),
    "vit_b_16": (vit_b_16, (1, 3, 224, 224)),
    "gpt2_block": (Gpt2Block, (1, 128, 768)),
}

# Exported under torch.no_grad(), as for inference; the others with grad
# enabled, as they always were (their exports stay the same).
NO_GRAD_EXPORTS = {"transformer_encoder"}


# A model's weight seed is SEED + its place here: the first four in sorted
# order (as they always were), then the zoo in the order it was added, so
# adding a model never changes another's weights.
SEED_ORDER = sorted(["resnet18", "resnet50", "mobilenet_v2", "bert"]) + [
    n for n in MODELS if n not in ("resnet18", "resnet50", "mobilenet_v2", "bert")]


def paths(out_dir, name):
    base = os.path.join(out_dir, name)
    return {kind: f"{base}.{kind}" for kind in ("onnx", "pt")} | {
        "input": f"{base}.input.npy", "torch": f"{base}.torch.npy"}


def build(name):
    """The model in eval mode, with weights drawn from a per-model seed."""
    constructor, shape = MODELS[name]
    torch.manual_seed(SEED + SEED_ORDER.index(name))
    model = constructor()
    zoo_models.calibrate_batchnorm(model, shape)
    model.eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(SEED + 100))
    return model, x


def export(name, out_dir):
    files = paths(out_dir, name)
    if all(os.path.exists(p) for p in files.values()):
        print(f"export: {name} present in {out_dir}")
        return
    model, x = build(name)
    with torch.no_grad() if name in NO_GRAD_EXPORTS else contextlib.nullcontext():
        torch.onnx.export(model, (x,), files["onnx"], opset_version=OPSET,
                          do_constant_folding=True, input_names=["input"],
                          output_names=["output"])
    with torch.no_grad():
        y = model(x)
    np.save(files["input"], x.numpy().astype(np.float32))
    np.save(files["torch"], y.numpy().astype(np.float32))
    torch.save(model, files["pt"])
    size = os.path.getsize(files["onnx"]) / 1e6
    print(f"export: {name} -> {files['onnx']} ({size:.1f} MB)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="build/bench/models")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated subset of " + ", ".join(MODELS))
    args = parser.parse_args()
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"export: unknown model(s) {', '.join(unknown)}")
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        export(name, args.out)


if __name__ == "__main__":
    # Run as the module `export_models`, so that torch.save records
    # export_models.BertLayer, which torch_bench.py can import.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import export_models
    export_models.main()
