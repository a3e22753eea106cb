from .compiled import CompiledGame, Treeplex
from .compiler import compile
from .errors import TensorCFRError
