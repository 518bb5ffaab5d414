//! Unsigned LEB128 for `u32`: 7 bits per byte, least significant group first, high bit set on
//! every byte but the last. At most 5 bytes; decoding rejects values above `u32::MAX`.

/// Appends `value` to `out`.
pub(crate) fn write(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads one varint at `*pos`, advancing `*pos` past it. `None` if the bytes run out, or the
/// varint is longer than 5 bytes or encodes a value above `u32::MAX`.
#[inline]
pub(crate) fn read(bytes: &[u8], pos: &mut usize) -> Option<u32> {
    let mut value = 0u32;
    for shift in [0u32, 7, 14, 21, 28] {
        let byte = *bytes.get(*pos)?;
        *pos += 1;
        let low = u32::from(byte & 0x7f);
        if shift == 28 && (byte & 0xf0) != 0 {
            // A fifth byte may carry only the top 4 bits, and must be the last.
            return None;
        }
        value |= low << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_edges() {
        for v in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            1 << 28,
            u32::MAX - 1,
            u32::MAX,
        ] {
            let mut buf = Vec::new();
            write(&mut buf, v);
            let mut pos = 0;
            assert_eq!(read(&buf, &mut pos), Some(v));
            assert_eq!(pos, buf.len());
        }
    }

    #[test]
    fn rejects_overflow_overlong_and_truncation() {
        // 2^32 would need a fifth byte of 0x10.
        assert_eq!(read(&[0x80, 0x80, 0x80, 0x80, 0x10], &mut 0), None);
        // Six bytes.
        assert_eq!(read(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00], &mut 0), None);
        assert_eq!(read(&[0x80], &mut 0), None);
        assert_eq!(read(&[], &mut 0), None);
    }
}
