"""Tools that only a kernel has: Python in the kernel, notebook reads, routing output into variables."""
