"""A ResNet-18-shaped network written by hand (torchvision may be absent), with seeded random weights.

Shared by make_resnet18.py (ONNX export) and torch_time.py (the torch peer in the benchmark), so both
time exactly the same weights. Architecture as in He et al. 2015 / torchvision's resnet18: 7x7/2 stem,
max pool, four stages of two BasicBlocks (64, 128, 256, 512 channels), global average pool, FC 1000.
"""
import torch
import torch.nn as nn

SEED = 1818


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def build():
    """The benchmark model in eval mode, with non-trivial BatchNorm statistics (seeded)."""
    torch.manual_seed(SEED)
    m = ResNet18()
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                c = mod.num_features
                mod.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                mod.running_var.copy_(torch.rand(c, generator=g) * 0.5 + 0.75)
                mod.weight.copy_(torch.rand(c, generator=g) * 0.5 + 0.5)
                mod.bias.copy_(torch.randn(c, generator=g) * 0.1)
    return m.eval()


def example_input():
    return torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(SEED + 1))
