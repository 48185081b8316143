"""What model calls cost: the price table (shipped defaults, overridable) and the cost of one call
from the usage its provider reported."""
