"""The loops family: Python loops over the rows of a tensor, and the per-row work inside them."""
