//! How numbers are written wherever a learner reads them: the TUI's panels, `explain`, the
//! mistakes report.

/// A value in at most 6 characters: `1.00`, `-0.71`, `-1e9` for the mask constant.
pub fn num(v: f32) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v.abs() >= 999.5 {
        format!("{v:.0e}")
    } else {
        format!("{v:.2}")
    }
}
