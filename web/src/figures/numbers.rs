//! How the playground prints numbers: fixed decimals without a negative zero, and long
//! lists of values cut to a readable head.

/// `x` with `digits` decimals, printing a value that rounds to zero as zero: round-off
/// leaves exact zeros (a gap between equal eigenvalues, an entry of an eigenvector) at
/// ±1e-17, and "-0.0000" reads as a sign that means something.
pub fn fixed(x: f64, digits: usize) -> String {
    let s = format!("{x:.digits$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => s,
    }
}

/// [`fixed`] with an explicit sign for non-zero values (`+0.1250`, `-0.1250`, `0.0000`),
/// for columns of signed entries.
pub fn signed(x: f64, digits: usize) -> String {
    let s = fixed(x, digits);
    if s.starts_with('-') || s.chars().all(|c| c == '0' || c == '.') {
        s
    } else {
        format!("+{s}")
    }
}

/// Values listed before a long list is folded behind "show all": about four lines of the
/// eigenvalue list at the card's width.
pub const LIST_HEAD: usize = 48;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_prints_as_zero() {
        assert_eq!(fixed(-1e-17, 4), "0.0000");
        assert_eq!(fixed(-0.0, 6), "0.000000");
        assert_eq!(fixed(-0.00012, 4), "-0.0001");
        assert_eq!(fixed(0.5, 2), "0.50");
        assert_eq!(signed(-2e-17, 4), "0.0000");
        assert_eq!(signed(0.25, 4), "+0.2500");
        assert_eq!(signed(-0.25, 4), "-0.2500");
    }
}
