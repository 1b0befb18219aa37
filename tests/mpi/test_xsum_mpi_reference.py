#!/usr/bin/env python3
# Where the recorded bits of tests/mpi/test_xsum_mpi.c come from: term() transcribed, then math.fsum (correctly
# rounded) and an exact fractions.Fraction sum.  Not run by ctest; usage: python3 tests/mpi/test_xsum_mpi_reference.py
import math, struct
from fractions import Fraction
M = (1 << 64) - 1
def mix(z):
    z = (z + 0x9e3779b97f4a7c15) & M
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)
def fb(b): return struct.unpack('<d', struct.pack('<Q', b))[0]
def bits(x): return struct.unpack('<Q', struct.pack('<d', x))[0]
def make_double(r, emin, span):
    e = emin + mix(r) % span
    return fb((r & 0x800fffffffffffff) | (e << 52))
def term(i):
    h = mix(0x5eed0000 + i // 2)
    kind = h % 8; r = mix(h ^ i)
    if kind < 2:
        x = make_double(h, 1600, 400)
        return -x if i % 2 else x
    if kind == 2: return make_double(r, 0, 3)
    return make_double(r, 1023 - 30, 61)
N, NV = 100000, 33332
t = [term(i) for i in range(N)]
tot = math.fsum(t)
ex = sum(Fraction(x) for x in t)
print("total fsum 0x%016x %r exact-fraction->float 0x%016x" % (bits(tot), tot, bits(float(ex))))
for k in range(3):
    v = math.fsum(t[k*NV:(k+1)*NV]); print("vec %d 0x%016x %r" % (k, bits(v), v))
print("naive python sum 0x%016x" % bits(sum(t)))
