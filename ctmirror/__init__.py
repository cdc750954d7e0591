"""ctmirror: an offline local mirror of ClinicalTrials.gov (API v2) with SQL analytics."""

from ctmirror.core.errors import CtmirrorError, InputError, InvalidArgument, WarehouseError
from ctmirror.read.mirror import Mirror

__all__ = ["CtmirrorError", "InputError", "InvalidArgument", "Mirror", "WarehouseError"]
__version__ = "0.1.0"
