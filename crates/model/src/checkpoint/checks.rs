//! The values a checkpoint may hold, checked alike by saving and by loading: finite weights and
//! moments, and the optimizer's settings in range.

use super::TrainState;
use crate::gpt::ParamLayout;
use attn_trace_i18n::tr;

/// The first non-finite value of a parameter tensor, as an error naming it.
pub(super) fn check_finite(layout: &ParamLayout, values: &[f32], prefix: &str) -> Result<(), String> {
    for spec in &layout.specs {
        let t = &values[spec.offset..spec.offset + spec.len];
        if let Some(k) = t.iter().position(|x| !x.is_finite()) {
            return Err(tr!(
                "tensor '{prefix}{name}' holds {value} at element {k}: a run that diverged",
                prefix,
                name = spec.name,
                value = t[k],
                k
            ));
        }
    }
    Ok(())
}

/// Checks what resuming would take from `state`: the optimizer's settings and moments.
pub(super) fn check_state(layout: &ParamLayout, st: &TrainState, step: u64) -> Result<(), String> {
    let opt = &st.opt;
    // the range `train` accepts is checked when resuming, where --lr can replace it
    if !(opt.lr.is_finite() && opt.lr > 0.0) {
        return Err(tr!(
            "metadata 'lr' must be a positive number, got {lr}",
            lr = format!("{:?}", opt.lr)
        ));
    }
    for (key, v) in [("beta1", opt.beta1), ("beta2", opt.beta2)] {
        if !(0.0..1.0).contains(&v) {
            return Err(tr!(
                "metadata '{key}' must be in [0, 1), got {v}",
                key,
                v = format!("{v:?}")
            ));
        }
    }
    if !(opt.eps.is_finite() && opt.eps > 0.0) {
        return Err(tr!(
            "metadata 'eps' must be a positive number, got {eps}",
            eps = format!("{:?}", opt.eps)
        ));
    }
    if !(opt.weight_decay.is_finite() && opt.weight_decay >= 0.0) {
        return Err(tr!(
            "metadata 'weight_decay' must be a number ≥ 0, got {wd}",
            wd = format!("{:?}", opt.weight_decay)
        ));
    }
    if opt.t > step {
        return Err(tr!(
            "metadata 'adamw_t' is {t}, more updates than the {step} steps taken",
            t = opt.t,
            step
        ));
    }
    if opt.m.len() != layout.total || opt.v.len() != layout.total {
        return Err(tr!("the optimizer state does not match the parameters").into());
    }
    check_finite(layout, &opt.m, "adamw.m.")?;
    check_finite(layout, &opt.v, "adamw.v.")?;
    for spec in &layout.specs {
        let v = &opt.v[spec.offset..spec.offset + spec.len];
        if let Some(k) = v.iter().position(|&x| x < 0.0) {
            return Err(tr!(
                "tensor 'adamw.v.{name}' holds a negative second moment ({value}) at element {k}",
                name = spec.name,
                value = v[k],
                k
            ));
        }
    }
    Ok(())
}
