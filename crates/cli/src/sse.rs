//! A server-sent events parser fed with arbitrary byte chunks
//! (https://html.spec.whatwg.org/multipage/server-sent-events.html).

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub id: Option<String>,
    /// The `event:` field; `message` when absent.
    pub event: String,
    pub data: String,
}

#[derive(Default)]
pub struct Parser {
    /// Bytes of an unfinished line (kept as bytes: chunks may split UTF-8).
    partial: Vec<u8>,
    id: Option<String>,
    event: Option<String>,
    data: Option<String>,
}

impl Parser {
    /// Feeds a chunk and returns the events it completes.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            self.partial.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            let mut line = std::mem::take(&mut self.partial);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if let Some(event) = self.line(&String::from_utf8_lossy(&line)) {
                events.push(event);
            }
        }
        self.partial.extend_from_slice(rest);
        events
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None; // a comment: keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            "event" => self.event = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            _ => {} // `retry` and unknown fields
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        let data = self.data.take()?;
        Some(SseEvent {
            id: self.id.clone(),
            event: event.unwrap_or_else(|| "message".to_owned()),
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = ": keep-alive\n\nid: 1\nevent: run.queued\ndata: {\"a\":1}\n\nid: 2\r\nevent: step.running\r\ndata: line one\r\ndata:line two\r\n\r\ndata: no id\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent {
                id: Some("1".into()),
                event: "run.queued".into(),
                data: "{\"a\":1}".into(),
            },
            SseEvent {
                id: Some("2".into()),
                event: "step.running".into(),
                data: "line one\nline two".into(),
            },
            // The last id carries over, as the spec says.
            SseEvent {
                id: Some("2".into()),
                event: "message".into(),
                data: "no id".into(),
            },
        ]
    }

    #[test]
    fn parses_whole_streams() {
        assert_eq!(Parser::default().push(STREAM.as_bytes()), expected());
    }

    #[test]
    fn parses_streams_split_at_every_byte() {
        let mut parser = Parser::default();
        let events: Vec<SseEvent> = STREAM
            .as_bytes()
            .chunks(1)
            .flat_map(|c| parser.push(c))
            .collect();
        assert_eq!(events, expected());
    }

    #[test]
    fn keeps_utf8_split_across_chunks() {
        let text = "data: ✓ done\n\n".as_bytes();
        let mut parser = Parser::default();
        let mut events = parser.push(&text[..7]);
        events.extend(parser.push(&text[7..]));
        assert_eq!(events[0].data, "✓ done");
    }

    #[test]
    fn holds_an_unfinished_event() {
        let mut parser = Parser::default();
        assert!(
            parser
                .push(b"id: 9\nevent: run.running\ndata: x\n")
                .is_empty()
        );
        assert_eq!(parser.push(b"\n").len(), 1);
    }
}
