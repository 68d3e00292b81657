"""TL509's entries for code people still copy: every place TorchFix's TOR201 fixture reports (`pretrained`
by keyword and positionally, `pretrained_backbone`, values known or not) is reported at the same
position, in cases written here; helpers of torchvision that are no model builders are not."""
from __future__ import annotations

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

TL509 = [r for r in all_rules() if r.CODE == "TL509"]

# (the line's code, whether it is reported); the call starts each line, at column 1
LINES = [
    ("import random", False),
    ("import torchvision", False),
    ("import torchvision.models as tvm", False),
    ("tvm.resnet18(pretrained=True)", True),
    ("tvm.resnet18(True)", True),
    ("tvm.densenet121(pretrained=False)", True),
    ("tvm.densenet121(False)", True),
    ("torchvision.models.detection.fasterrcnn_resnet50_fpn(pretrained_backbone=False)", True),
    ("torchvision.models.detection.fasterrcnn_resnet50_fpn(pretrained=True, pretrained_backbone=False)", True),
    ("use = random.random() > 0.5", False),
    ("tvm.vgg11(pretrained=use)", True),
    ("tvm.segmentation.fcn_resnet50(pretrained=use, pretrained_backbone=True)", True),
    ("tvm.quantization.mobilenet_v2(pretrained=use)", True),
    ("tvm.detection.backbone_utils.resnet_fpn_backbone(pretrained=use)", True),
    ("tvm.resnet18(weights=None)", False),
    ("tvm.resnet18(weights=tvm.ResNet18_Weights.IMAGENET1K_V1)", False),
    ("from torchvision.models.vgg import make_layers, cfgs", False),
    ("make_layers(cfgs['B'], True)", False),
]


def test_tor201_fixture_positions_are_reported():
    source = "\n".join(code for code, _ in LINES) + "\n"
    result = lint_source("vision.py", source, Settings(rules=TL509))
    assert not result.errors
    found = sorted((d.line, d.col) for d in result.diagnostics)
    expected = [(i, 1) for i, (_, reported) in enumerate(LINES, start=1) if reported]
    assert found == expected
