//! A reproducible stream of random numbers for test inputs and sample crowds: Marsaglia's
//! xorshift64 (shifts 13, 7, 17), whose stream its seed fixes forever, with no dependency.
//! The generated crowds use SplitMix64 instead (`assembly/generate.rs`), part of their format.

/// xorshift64's state: any seed but 0.
pub struct Xorshift64(pub u64);

impl Xorshift64 {
    /// The next 64 bits.
    pub fn next_bits(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `[0, 1)`: the top 53 bits of the next draw.
    pub fn unit(&mut self) -> f64 {
        (self.next_bits() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stream is Marsaglia's: the first draws from seed 1 are the published ones, and
    /// `unit` spans `[0, 1)`.
    #[test]
    fn the_stream_is_xorshift64() {
        let mut rng = Xorshift64(1);
        assert_eq!(rng.next_bits(), 1_082_269_761);
        assert_eq!(rng.next_bits(), 1_152_992_998_833_853_505);
        let units: Vec<f64> = (0..10_000).map(|_| rng.unit()).collect();
        assert!(units.iter().all(|u| (0.0..1.0).contains(u)));
        let mean = units.iter().sum::<f64>() / units.len() as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }
}
