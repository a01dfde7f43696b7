//! The attention passes as they run without a log (training, `run` untraced): [`dispatch`]
//! chooses the code, [`fast`] holds the vectorised loops. Tests hold them to the reference
//! kernels bit for bit.

pub mod dispatch;
pub mod fast;
pub mod flash;
