# fix-safety: absent=TL401 safe=same unsafe=same
"""A single image [1, H, W] squeezed for display: every singleton is meant to go (a guessed
squeeze(-1) would hand a 3-D array to imshow)."""
import torch


def imshow(array):
    if array.ndim != 2:
        raise TypeError(f"Invalid shape {array.shape} for image data")
    print("showing", array.shape)


def show_mask(mask):
    imshow(mask.squeeze().numpy())
    img = mask[0:1].squeeze()
    imshow(img.cpu().numpy())


torch.manual_seed(0)
show_mask(torch.rand(1, 4, 5) > 0.5)
print(float(torch.rand(1, 1).squeeze()) < 1.0)
