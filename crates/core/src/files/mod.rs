//! The user's files: [`input`] reads them bounded and never blocking, [`atomic`] writes them
//! so that nobody ever sees half of one.

pub mod atomic;
pub mod input;
