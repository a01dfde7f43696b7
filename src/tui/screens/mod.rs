//! One file per screen: each has its own state, its key handling and a pure render function.

pub mod compare;
pub mod help;
pub mod menu;
pub mod open;
pub mod tracer;
