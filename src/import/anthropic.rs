//! Anthropic Messages API conversations → RAWP frames (SPEC 5). (Being built.)

use super::{Decoded, Decoder};

/// Buffers the whole input and maps it at the end.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    text: String,
}

impl AnthropicDecoder {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Decoder for AnthropicDecoder {
    fn line(&mut self, _line: u64, text: &str, _out: &mut Vec<Decoded>) {
        self.text.push_str(text);
        self.text.push('\n');
    }

    fn finish(&mut self, _out: &mut Vec<Decoded>) {}
}
