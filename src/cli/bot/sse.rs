//! A `text/event-stream` parser, as the HTML standard reads one: events are
//! separated by a blank line, `event:`, `data:` and `id:` lines make them,
//! lines starting with `:` are comments (the server's keep-alives).

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `event:` (`message` when the frame names none).
    pub event: String,
    /// `id:`, if the frame has one.
    pub id: Option<String>,
    /// The `data:` lines joined by newlines.
    pub data: String,
}

/// Turns the bytes of a stream, in chunks of any size, into events.
#[derive(Debug, Default)]
pub struct Parser {
    buffer: Vec<u8>,
}

impl Parser {
    /// Takes the next chunk; answers the events it completes.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Event> {
        // JSON data never holds a raw carriage return, so dropping them
        // turns CRLF line ends into LF ones.
        self.buffer
            .extend(chunk.iter().copied().filter(|&b| b != b'\r'));
        let mut events = Vec::new();
        while let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
            let frame: Vec<u8> = self.buffer.drain(..end + 2).collect();
            if let Some(event) = parse_frame(&String::from_utf8_lossy(&frame[..end])) {
                events.push(event);
            }
        }
        events
    }
}

/// The event of one frame; `None` for a frame without data (comments, `retry:`).
fn parse_frame(frame: &str) -> Option<Event> {
    let mut event = Event {
        event: "message".to_owned(),
        id: None,
        data: String::new(),
    };
    let mut has_data = false;
    for line in frame.split('\n') {
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => value.clone_into(&mut event.event),
            "id" => event.id = Some(value.to_owned()),
            "data" => {
                if has_data {
                    event.data.push('\n');
                }
                event.data.push_str(value);
                has_data = true;
            }
            _ => {}
        }
    }
    has_data.then_some(event)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str, chunk: usize) -> Vec<Event> {
        let mut parser = Parser::default();
        text.as_bytes()
            .chunks(chunk.max(1))
            .flat_map(|c| parser.push(c))
            .collect()
    }

    const STREAM: &str = "retry: 3000\n\n: keep-alive\n\nevent: state\nid: 7\ndata: {\"ply\":3}\n\nevent: challenge\ndata: {\"a\":\ndata: \"é\"}\n\ndata:plain\n\n";

    #[test]
    fn events_come_out_whole_whatever_the_chunks() {
        let expected = vec![
            Event {
                event: "state".into(),
                id: Some("7".into()),
                data: "{\"ply\":3}".into(),
            },
            Event {
                event: "challenge".into(),
                id: None,
                data: "{\"a\":\n\"é\"}".into(),
            },
            Event {
                event: "message".into(),
                id: None,
                data: "plain".into(),
            },
        ];
        for chunk in 1..=STREAM.len() {
            assert_eq!(all(STREAM, chunk), expected, "chunks of {chunk} bytes");
        }
    }

    #[test]
    fn crlf_line_ends_are_read_too() {
        let events = all("event: x\r\ndata: 1\r\n\r\n", 3);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event, "x");
        assert_eq!(events[0].data, "1");
    }

    #[test]
    fn an_unfinished_frame_waits_for_its_blank_line() {
        let mut parser = Parser::default();
        assert!(parser.push(b"event: state\ndata: 1\n").is_empty());
        assert_eq!(parser.push(b"\n").len(), 1);
    }
}
