"""Build the Cython extensions of wo (wo/_fast)."""
import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

ext_kwargs = dict(include_dirs=[np.get_include()], extra_compile_args=["-O3"],
                  define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")])
extensions = [
    Extension("wo._fast._hash", ["wo/_fast/_hash.pyx"], **ext_kwargs),
    Extension("wo._fast._search", ["wo/_fast/_search.pyx"], **ext_kwargs),
]
setup(ext_modules=cythonize(extensions, compiler_directives={"language_level": "3"}))
