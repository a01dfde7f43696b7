//! Criterion's measurement of the CPU time of the benchmarking thread: other programs sharing
//! the machine hardly move it, so two builds can be compared on a busy host.

use criterion::Throughput;
use criterion::measurement::{Measurement, ValueFormatter};

/// The CPU time the calling thread has used, in seconds.
pub(crate) fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through the valid pointer it is given
    #[allow(unsafe_code)]
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut ts)
    };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The benchmarking thread's CPU time, in nanoseconds as criterion's wall clock.
pub(crate) struct ThreadCpu;

impl Measurement for ThreadCpu {
    type Intermediate = f64;
    type Value = f64;

    fn start(&self) -> f64 {
        thread_cpu_seconds()
    }

    fn end(&self, start: f64) -> f64 {
        thread_cpu_seconds() - start
    }

    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }

    fn zero(&self) -> f64 {
        0.0
    }

    fn to_f64(&self, v: &f64) -> f64 {
        v * 1e9
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &Nanoseconds
    }
}

/// Nanoseconds shown as ns, µs, ms or s; a throughput as elements (or bytes) per CPU-second.
struct Nanoseconds;

impl ValueFormatter for Nanoseconds {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = match typical {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e3, "µs"),
            t if t < 1e9 => (1e6, "ms"),
            _ => (1e9, "s"),
        };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }

    fn scale_throughputs(&self, _: f64, throughput: &Throughput, values: &mut [f64]) -> &'static str {
        let (n, unit) = match *throughput {
            Throughput::Elements(n) | Throughput::ElementsAndBytes { elements: n, .. } => (n as f64, "Melem/s CPU"),
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (n as f64, "MB/s CPU"),
            Throughput::Bits(n) => (n as f64, "Mbit/s CPU"),
        };
        // a value is nanoseconds per iteration
        values.iter_mut().for_each(|v| *v = n / (*v * 1e-9) / 1e6);
        unit
    }

    fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
        "ns"
    }
}
