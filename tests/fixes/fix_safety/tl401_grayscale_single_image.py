# fix-safety: codes=TL401 safe=same unsafe=changed
"""One grayscale image made a batch of one and squeezed back: `squeeze()` drops the batch and the
channel, and the code after it relies on both being gone (two index tensors from a 2-D `torch.where`).
`squeeze(0)` is the right edit only if the channel should stay: offered as unsafe, never applied by
`--fix` alone (it would break the unpacking below)."""
import torch


def changed_pixels(image, transform):
    batch = image.unsqueeze(0)
    after = transform(batch)
    before = batch.squeeze()
    rows, cols = torch.where(before != after[0, 0])
    return rows.tolist(), cols.tolist()


image = torch.zeros(1, 4, 4)
try:
    print(changed_pixels(image, lambda b: b + (torch.arange(16).view(1, 1, 4, 4) % 5 == 0)))
except ValueError as error:  # the unpacking of a 3-D `torch.where`
    print("failed:", error)
