"""The .tl dtypes for the differential tester: widths, ranges, precision, and exact rounding of a
double to each float format (round to nearest even; fp8 saturating as tlc's emitted code does),
written out here so that nothing depends on the generated headers' types."""
import math

FLOATS = {
    # name: (exponent bits, mantissa bits, bias, has inf, total bits)
    "f16": (5, 10, 15, True, 16),
    "bf16": (8, 7, 127, True, 16),
    "f8e4m3": (4, 3, 7, False, 8),
    "f8e5m2": (5, 2, 15, True, 8),
}
INTS = {"i4": (4, True), "i8": (8, True), "i16": (16, True), "i32": (32, True), "i64": (64, True),
        "u4": (4, False), "u8": (8, False), "u16": (16, False), "u32": (32, False), "u64": (64, False)}
ALIASES = {"float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32", "float": "f32",
           "float64": "f64", "double": "f64", "e4m3": "f8e4m3", "float8_e4m3": "f8e4m3",
           "float8_e4m3fn": "f8e4m3", "e5m2": "f8e5m2", "float8_e5m2": "f8e5m2"}


def canon(d):
    return ALIASES.get(d, d)


def is_int(d):
    return canon(d) in INTS or d == "bool"


def is_float(d):
    return canon(d) in FLOATS or canon(d) in ("f32", "f64")


def bits(d):
    d = canon(d)
    if d in INTS:
        return INTS[d][0]
    if d in FLOATS:
        return FLOATS[d][4]
    return {"f32": 32, "f64": 64, "bool": 8}[d]


def storage_bytes(d):
    """Bytes per element in memory (4-bit types are packed two per byte: 0.5)."""
    return bits(d) / 8


def int_range(d):
    n, signed = INTS[canon(d)] if d != "bool" else (1, False)
    return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed else (0, (1 << n) - 1)


def mantissa_bits(d):
    d = canon(d)
    if d in FLOATS:
        return FLOATS[d][1]
    return {"f32": 23, "f64": 52}[d]


def eps(d):
    """Half an ulp at 1.0, relative: the rounding error bound of one rounding to d."""
    if is_int(d):
        return 0.0
    return 2.0 ** -(mantissa_bits(d) + 1)


def max_finite(d):
    d = canon(d)
    if d == "f32":
        return 3.4028234663852886e38
    if d == "f64":
        return 1.7976931348623157e308
    e, m, bias, has_inf, _ = FLOATS[d]
    if has_inf:
        return (2 - 2.0 ** -m) * 2.0 ** ((1 << e) - 2 - bias)
    return (2 - 2.0 ** -(m - 1)) * 2.0 ** ((1 << e) - 1 - bias)  # e4m3fn: 448


def holds(d, mag, gran):
    """Whether d represents every multiple of 2**-gran with magnitude <= mag exactly."""
    if is_int(d):
        return gran <= 0
    if mag == 0:
        return True
    top = math.floor(math.log2(mag)) if mag >= 1 else -1
    needed = top + gran  # bits from the leading one down to 2**-gran
    d = canon(d)
    if d in FLOATS:
        e, m, bias, _, _ = FLOATS[d]
        min_normal_exp = 1 - bias
        if -gran < min_normal_exp - m:
            return False
        if mag > max_finite(d):
            return False
    return needed <= mantissa_bits(d)


def round_float(d, v):
    """v (a double) rounded to the float format d, as a double. f32 via struct."""
    d = canon(d)
    if d == "f64":
        return v
    if d == "f32":
        import struct
        return struct.unpack("<f", struct.pack("<f", v))[0]
    return decode(d, encode(d, v))


def encode(d, v):
    """The bits of v in the small float format d (round to nearest even; e4m3 saturates to its
    largest finite value; the others overflow to infinity)."""
    e, m, bias, has_inf, total = FLOATS[canon(d)]
    sign = 1 << (total - 1) if (v < 0 or (v == 0 and math.copysign(1, v) < 0)) else 0
    a = abs(v)
    if math.isnan(a):
        return sign | ((1 << (total - 1)) - 1)
    maxf = max_finite(d)
    max_code = encode_finite(e, m, bias, maxf)
    inf_code = ((1 << e) - 1) << m
    if math.isinf(a):
        return sign | (inf_code if has_inf else max_code)
    code = encode_finite(e, m, bias, a)
    if code > max_code:
        code = inf_code if has_inf else max_code
    return sign | code


def encode_finite(e, m, bias, a):
    if a == 0:
        return 0
    exp = math.floor(math.log2(a))
    if 2.0 ** exp > a:  # log2 rounding
        exp -= 1
    if 2.0 ** (exp + 1) <= a:
        exp += 1
    exp = max(exp, 1 - bias)  # subnormals share the smallest exponent
    scaled = a / 2.0 ** (exp - m)  # the mantissa as an integer, with a fraction
    q = math.floor(scaled)
    rest = scaled - q
    if rest > 0.5 or (rest == 0.5 and q % 2 == 1):
        q += 1
    if q >= (2 << m):  # carried into the next binade
        q >>= 1
        exp += 1
    if q < (1 << m):  # subnormal
        return q
    return ((exp + bias) << m) | (q - (1 << m))


def decode(d, code):
    e, m, bias, has_inf, total = FLOATS[canon(d)]
    sign = -1.0 if code >> (total - 1) & 1 else 1.0
    ex = (code >> m) & ((1 << e) - 1)
    man = code & ((1 << m) - 1)
    if has_inf and ex == (1 << e) - 1:
        return sign * math.inf if man == 0 else math.nan
    if not has_inf and ex == (1 << e) - 1 and man == (1 << m) - 1:
        return math.nan
    if ex == 0:
        return sign * man * 2.0 ** (1 - bias - m)
    return sign * (1 + man / 2.0 ** m) * 2.0 ** (ex - bias)


def roundtrip(d, v):
    """v as d holds it (integers: v itself when in range, else None)."""
    d = canon(d)
    if d == "bool":
        return v if v in (0, 1) else None
    if d in INTS:
        lo, hi = int_range(d)
        return v if float(v).is_integer() and lo <= v <= hi else None
    return round_float(d, v)
