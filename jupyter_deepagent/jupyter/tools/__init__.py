"""Tools that only a kernel has: the notebook's own functions as tools, Python in the kernel, a
time limit for one call, and where what they print goes while they run."""
