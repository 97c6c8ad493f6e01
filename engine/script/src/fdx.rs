//! Final Draft screenplays (`.fdx`: Final Draft's own format, which `WriterDuet`, Fade In,
//! Highland and Celtx also export): audio dramas are often written in a screenwriting tool, and
//! its XML read as text would speak its tags.
//!
//! An `.fdx` is XML whose `<Content>` holds one `<Paragraph Type="…">` per element of the
//! screenplay. This module rewrites those paragraphs as the screenplay they print as, in the
//! layout [`super::play`] already reads (Fountain's conventions), and pins that layout with a
//! `format: play` front matter:
//! - a scene heading, a new act, an end of act: a chapter (`INT. KITCHEN - NIGHT`, or
//!   `# ACT ONE` where the heading does not look like one);
//! - a character: the speaker's name on its own line after a blank line (`@Name` where the name
//!   is not in capitals, Fountain's mark for a name), its parentheticals and dialogue on the
//!   lines below;
//! - action, shots, transitions and general text: a bracketed stage direction, so an action
//!   line in capitals (`SILENCE.`) is never taken for a speaker;
//! - the title page, headers and footers, scene summaries, script notes and the cast list are
//!   not part of `<Content>`'s paragraphs, or are left out.
//!
//! Lines and columns in messages count the screenplay as rewritten (what `banter script check`
//! prints), not the XML's lines. The XML is scanned by [`super::office::scan`].

use super::labels::scene_heading;
use super::office::{attribute, scan, Item};

/// How far into a file to look for Final Draft's root element.
const SNIFF: usize = 4096;

/// Whether `text` is a Final Draft document (XML whose root is `<FinalDraft>`).
pub(crate) fn is_final_draft(text: &str) -> bool {
    let head = super::source::opening(text, SNIFF);
    (head.starts_with("<?xml") || head.starts_with("<FinalDraft")) && head.contains("<FinalDraft")
}

/// One paragraph of the screenplay, as read.
struct Paragraph {
    kind: String,
    text: String,
}

/// A Final Draft document's screenplay, as text in the play layout.
pub(crate) fn screenplay_text(xml: &str) -> Result<String, String> {
    let paragraphs = paragraphs(xml)?;
    if paragraphs.is_empty() {
        return Err(
            "a Final Draft document with no paragraphs in its `<Content>`; check that it is the \
             script and not a template"
                .to_owned(),
        );
    }
    let mut out = String::from("---\nformat: play\n---\n");
    for p in &paragraphs {
        write_paragraph(&mut out, p);
    }
    Ok(out)
}

/// The paragraphs of the screenplay's body, in order: `<Paragraph>` elements of the document's
/// `<Content>` (and those of dual dialogue inside them), with their `<Text>` runs joined.
fn paragraphs(xml: &str) -> Result<Vec<Paragraph>, String> {
    let mut out: Vec<Paragraph> = Vec::new();
    // The open elements, outermost first.
    let mut open: Vec<String> = Vec::new();
    // Where the body paragraph being read stands in `open`; inside one of its `<Text>` runs.
    let mut paragraph: Option<usize> = None;
    let mut in_text = false;
    scan(xml, "a Final Draft document", |item| match item {
        Item::Text(text) => {
            if in_text {
                if let Some(p) = out.last_mut() {
                    p.text.push_str(text);
                }
            }
        }
        Item::Tag(tag) => {
            if tag.closing {
                if let Some(at) = open.iter().rposition(|name| name == tag.name) {
                    open.truncate(at);
                }
                in_text = false;
                paragraph = paragraph.filter(|&at| at < open.len());
                return;
            }
            if tag.name == "Paragraph" && in_body(&open) {
                out.push(Paragraph {
                    kind: attribute(tag.body, "Type").unwrap_or("General").to_owned(),
                    text: String::new(),
                });
                paragraph = (!tag.empty).then_some(open.len());
            } else if tag.name == "Text" && paragraph.is_some_and(|at| at + 1 == open.len()) {
                // A run of the paragraph's own text (a scene's summary has paragraphs too).
                in_text = !tag.empty;
            }
            if !tag.empty {
                open.push(tag.name.to_owned());
            }
        }
    })?;
    for p in &mut out {
        p.text = p.text.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    out.retain(|p| !p.text.is_empty());
    Ok(out)
}

/// Whether a `<Paragraph>` opened inside `open` is one of the body's: a child of the root's
/// `<Content>`, or of a body paragraph's `<DualDialogue>`.
fn in_body(open: &[String]) -> bool {
    match open {
        [root, content] => root == "FinalDraft" && content == "Content",
        [root, content, paragraph, dual] => {
            root == "FinalDraft"
                && content == "Content"
                && paragraph == "Paragraph"
                && dual == "DualDialogue"
        }
        _ => false,
    }
}

/// Writes one paragraph in the play layout, as a line of its own.
fn write_paragraph(out: &mut String, p: &Paragraph) {
    let text = p.text.as_str();
    match p.kind.as_str() {
        "Character" => {
            blank_line(out);
            if text.chars().any(char::is_lowercase) {
                out.push('@');
            }
            out.push_str(text);
        }
        "Dialogue" | "Lyrics" => out.push_str(text),
        "Parenthetical" => {
            if text.starts_with('(') {
                out.push_str(text);
            } else {
                out.push('(');
                out.push_str(text.trim_end_matches(')'));
                out.push(')');
            }
        }
        "Scene Heading" | "New Act" | "End of Act" => {
            blank_line(out);
            if !scene_heading(text) {
                out.push_str("# ");
            }
            out.push_str(text);
        }
        "Cast List" => return,
        // Action, Shot, Transition, General and any type a later version adds: said by no one.
        _ => {
            blank_line(out);
            out.push('[');
            out.push_str(&text.replace('[', "(").replace(']', ")"));
            out.push(']');
        }
    }
    out.push('\n');
}

/// Ends what came before with a blank line (the front matter needs none).
fn blank_line(out: &mut String) {
    if !out.ends_with("\n\n") && !out.ends_with("---\n") {
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::{is_final_draft, screenplay_text};
    use crate::{Episode, ParseOptions, ScriptFormat};

    /// A screenplay as Final Draft 12 saves it, cut down: a title page, scene properties with a
    /// summary, styled text runs, dual dialogue, a script note and the settings after the body.
    const FDX: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="no" ?>
<FinalDraft DocumentType="Script" Template="No" Version="5">
  <Content>
    <Paragraph Type="Scene Heading">
      <SceneProperties Length="1 4/8" Page="1" Title="">
        <Summary><Paragraph><Text>Morag alone.</Text></Paragraph></Summary>
        <SceneArcBeats/>
      </SceneProperties>
      <Text>INT. LIGHTHOUSE - NIGHT</Text>
    </Paragraph>
    <Paragraph Type="Action"><Text>Wind howls. A kettle </Text><Text Style="Italic">whistles</Text><Text>. [Beat.]</Text></Paragraph>
    <Paragraph Type="Action"><Text>SILENCE.</Text></Paragraph>
    <Paragraph Type="Character"><Text>Morag</Text></Paragraph>
    <Paragraph Type="Parenthetical"><Text>to herself</Text></Paragraph>
    <Paragraph Type="Dialogue"><Text>Another storm.
        Third this week.</Text></Paragraph>
    <Paragraph Type="Character"><Text>EWAN (V.O.)</Text></Paragraph>
    <Paragraph Type="Dialogue"><Text>Morag, are you there? Over &amp; out&#8230;</Text></Paragraph>
    <Paragraph Type="Transition"><Text>CUT TO:</Text></Paragraph>
    <Paragraph Type="New Act"><Text>ACT TWO</Text></Paragraph>
    <Paragraph Type="Scene Heading"><Text>THE HARBOUR</Text></Paragraph>
    <Paragraph>
      <DualDialogue>
        <Paragraph Type="Character"><Text>EWAN</Text></Paragraph>
        <Paragraph Type="Dialogue"><Text>Pick up!</Text></Paragraph>
        <Paragraph Type="Character"><Text>MORAG</Text></Paragraph>
        <Paragraph Type="Dialogue"><Text>I'm here!</Text></Paragraph>
      </DualDialogue>
    </Paragraph>
    <Paragraph Type="Action"/>
  </Content>
  <TitlePage><Content><Paragraph Type="Title"><Text>THE KEEPER</Text></Paragraph></Content></TitlePage>
  <ScriptNotes><ScriptNote><Paragraph><Text>Fix this scene.</Text></Paragraph></ScriptNote></ScriptNotes>
  <HeaderAndFooter><Header><Paragraph><Text>Page header</Text></Paragraph></Header></HeaderAndFooter>
</FinalDraft>
"#;

    #[test]
    fn a_final_draft_screenplay_reads_as_the_play_it_prints() {
        assert!(is_final_draft(FDX));
        assert!(!is_final_draft(
            "<?xml version=\"1.0\"?><Person1>Hi</Person1>"
        ));
        assert_eq!(
            screenplay_text(FDX).expect("fdx"),
            "---\nformat: play\n---\n\
             INT. LIGHTHOUSE - NIGHT\n\n\
             [Wind howls. A kettle whistles. (Beat.)]\n\n\
             [SILENCE.]\n\n\
             @Morag\n(to herself)\nAnother storm. Third this week.\n\n\
             EWAN (V.O.)\nMorag, are you there? Over & out…\n\n\
             [CUT TO:]\n\n\
             ACT TWO\n\n\
             # THE HARBOUR\n\n\
             EWAN\nPick up!\n\n\
             MORAG\nI'm here!\n"
        );
    }

    #[test]
    fn broken_or_empty_documents_are_refused_with_a_reason() {
        let broken =
            screenplay_text("<FinalDraft><Content><Paragraph Type=\"Action\"><Text>a &bogus; b")
                .expect_err("entity");
        assert!(broken.contains("Final Draft document"), "{broken}");
        let empty =
            screenplay_text("<FinalDraft><Content></Content></FinalDraft>").expect_err("empty");
        assert!(empty.contains("no paragraphs"), "{empty}");
    }

    #[test]
    fn the_rewritten_screenplay_parses_into_its_speeches() {
        let episode = Episode::parse_bytes("keeper.fdx", FDX.as_bytes(), &ParseOptions::default())
            .expect("parsed");
        assert_eq!(episode.format, ScriptFormat::Play);
        let said: Vec<(String, String)> = episode
            .lines
            .iter()
            .map(|l| (l.speaker.to_uppercase(), episode.spoken_text(l)))
            .collect();
        let expected = [
            ("MORAG", "Another storm. Third this week."),
            ("EWAN", "Morag, are you there? Over & out…"),
            ("EWAN", "Pick up!"),
            ("MORAG", "I'm here!"),
        ];
        assert_eq!(
            said,
            expected.map(|(a, b)| (a.to_owned(), b.to_owned())).to_vec()
        );
        let chapters: Vec<&str> = episode.chapters.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            chapters,
            ["INT. LIGHTHOUSE - NIGHT", "ACT TWO", "THE HARBOUR"]
        );
    }
}
