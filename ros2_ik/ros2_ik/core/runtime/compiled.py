"""The one ``jit`` decorator of the numba kernels, importable with numba or without.

Each constraint type's file holds its compiled rows, linearisation and measure
(:mod:`ros2_ik.core.constraints.registry`) beside its Python class, so the decorator
must not need the solver package (which imports the constraints).  Without numba the
decorated functions stay plain Python: the kernels never run then
(``chain_kernel.available``), and the Python classes need none of them.
"""
import importlib.util


def jit(function=None, *, inline: str = "never"):
    """Compile ``function`` with IEEE division (``error_model="numpy"``), as numpy divides.

    numba's default ("python") raises ZeroDivisionError on a zero divisor: a NaN reaching
    a kernel (an attempt diverging on a target 1e300 m away) then made ``log3`` divide by
    a zero norm and ``solve()`` raise instead of ending the attempt (found by
    ``make fuzz``).  With NaN and inf the attempt ends unconverged and the driver moves on.
    ``@jit(inline="always")``: numba inlines the function into its callers (its array
    arguments then cost no call, ``_constraint_jit.kinematics``).  Cached on disk
    (``cache=True``).
    """
    if importlib.util.find_spec("numba") is None:
        return (lambda f: f) if function is None else function
    import numba
    decorate = numba.njit(cache=True, nogil=True, error_model="numpy", inline=inline)
    return decorate if function is None else decorate(function)
