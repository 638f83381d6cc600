//! What each control word does: destinations it starts or skips, document and font-table
//! settings, character formatting, special characters, and paragraph, list and table marks.

use super::{Dest, Format, Parser, PictureKind};
use crate::rtf::codepage::{codepage_for_charset, encoding_for_codepage};

impl Parser<'_> {
    pub(super) fn word(&mut self, name: &[u8], param: Option<i32>) {
        let first = std::mem::replace(&mut self.group.first, false);
        if name == b"bin" {
            // Binary data: never text, whatever the destination; a picture's bytes in `\pict`.
            let data = self.lexer.take(usize::try_from(param.unwrap_or(0)).unwrap_or(0));
            if self.group.dest == Dest::Picture {
                self.picture.push(data);
            }
            return;
        }
        if self.skip > 0 && name != b"u" {
            self.skip -= 1;
            return;
        }
        let on = param != Some(0);
        let number = param.unwrap_or(0);
        let index = usize::try_from(number).unwrap_or(0);
        match name {
            // Destinations read for what they hold.
            b"fonttbl" => self.destination(Dest::FontTable),
            b"colortbl" => {
                self.destination(Dest::ColorTable);
                self.color = [None; 3];
            }
            b"fldinst" => {
                self.destination(Dest::FieldInstruction);
                self.instruction.clear();
            }
            b"fldrslt" | b"field" | b"shprslt" | b"result" | b"shppict" => {}
            b"stylesheet" => self.destination(Dest::StyleSheet),
            b"listtext" | b"pntext" => {
                if self.group.dest == Dest::Body {
                    self.group.dest = Dest::ListText;
                    self.list_marker.clear();
                } else {
                    self.group.dest = Dest::Skip;
                }
            }
            b"footnote" => {
                if matches!(self.group.dest, Dest::Body) {
                    self.group.dest = Dest::Footnote;
                    self.footnotes.push(String::new());
                    let n = self.footnotes.len();
                    if self.referenced < n {
                        // No `\chftn` marked the reference: it is where the note is.
                        self.paragraph.push_note(n);
                        self.referenced = n;
                    }
                    self.outer.push(std::mem::take(&mut self.paragraph));
                } else {
                    self.group.dest = Dest::Skip;
                }
            }
            b"pict" => {
                if matches!(self.group.dest, Dest::Body | Dest::Footnote) && !self.group.hidden {
                    self.group.dest = Dest::Picture;
                    self.picture = Default::default();
                } else {
                    self.group.dest = Dest::Skip;
                }
            }
            b"pngblip" if self.group.dest == Dest::Picture => self.picture.kind = Some(PictureKind::Png),
            b"jpegblip" if self.group.dest == Dest::Picture => self.picture.kind = Some(PictureKind::Jpeg),
            b"emfblip" if self.group.dest == Dest::Picture => self.picture.kind = Some(PictureKind::Other("EMF")),
            b"wmetafile" if self.group.dest == Dest::Picture => self.picture.kind = Some(PictureKind::Other("WMF")),
            b"macpict" if self.group.dest == Dest::Picture => self.picture.kind = Some(PictureKind::Other("PICT")),
            b"pmmetafile" | b"dibitmap" | b"wbitmap" if self.group.dest == Dest::Picture => {
                self.picture.kind = Some(PictureKind::Other("bitmap"));
            }
            b"info"
            | b"header"
            | b"headerl"
            | b"headerr"
            | b"headerf"
            | b"footer"
            | b"footerl"
            | b"footerr"
            | b"footerf"
            | b"listtable"
            | b"listoverridetable"
            | b"revtbl"
            | b"rsidtbl"
            | b"generator"
            | b"xmlnstbl"
            | b"themedata"
            | b"colorschememapping"
            | b"datastore"
            | b"latentstyles"
            | b"objdata"
            | b"objclass"
            | b"objname"
            | b"xe"
            | b"tc"
            | b"txe"
            | b"bkmkstart"
            | b"bkmkend"
            | b"annotation"
            | b"atnid"
            | b"atnauthor"
            | b"atndate"
            | b"atnref"
            | b"comment"
            | b"ftnsep"
            | b"ftnsepc"
            | b"aftnsep"
            | b"aftnsepc"
            | b"pgdsctbl"
            | b"nonshppict"
            | b"template"
            | b"userprops"
            | b"docvar"
            | b"nonesttables"
            | b"pn"
            | b"fname"
            | b"falt"
            | b"panose"
            | b"mmathPr"
            | b"shpinst"
            | b"sp"
            | b"filetbl"
            | b"keywords"
            | b"title"
            | b"subject"
            | b"author"
            | b"operator"
            | b"doccomm"
            | b"company"
            | b"manager" => {
                self.group.dest = Dest::Skip;
            }
            _ if self.group.star && first => {
                // An unknown `\*\destination`.
                self.group.dest = Dest::Skip;
            }
            // Document.
            b"ansicpg" => {
                if let Some(encoding) = encoding_for_codepage(number) {
                    self.default_encoding = encoding;
                }
            }
            b"mac" => self.default_encoding = encoding_rs::MACINTOSH,
            b"pc" | b"pca" => self.default_encoding = encoding_rs::WINDOWS_1252,
            b"deff" => self.default_font = param,
            // Font and colour tables.
            b"f" if self.group.dest == Dest::FontTable => self.table_font = param,
            b"fcharset" if self.group.dest == Dest::FontTable => {
                if let (Some(font), Some(encoding)) =
                    (self.table_font, codepage_for_charset(number).and_then(encoding_for_codepage))
                {
                    if self.fonts.len() < 10_000 {
                        self.fonts.insert(font, encoding);
                    }
                }
            }
            b"cpg" if self.group.dest == Dest::FontTable => {
                if let (Some(font), Some(encoding)) = (self.table_font, encoding_for_codepage(number)) {
                    if self.fonts.len() < 10_000 {
                        self.fonts.insert(font, encoding);
                    }
                }
            }
            b"red" | b"green" | b"blue" if self.group.dest == Dest::ColorTable => {
                let slot = match name {
                    b"red" => 0,
                    b"green" => 1,
                    _ => 2,
                };
                self.color[slot] = Some(number.clamp(0, 255) as u8);
            }
            b"f" => self.group.font = param,
            b"uc" => self.group.uc = index.min(16),
            b"u" => {
                let unit = if number < 0 { number + 65_536 } else { number };
                self.unicode(u32::try_from(unit).unwrap_or(0xFFFD));
                self.skip = self.group.uc;
            }
            // Character formatting.
            b"plain" => {
                self.group.format = Format { link: self.group.format.link, ..Format::default() };
                self.group.hidden = false;
                self.group.font = self.default_font;
            }
            b"b" => self.group.format.bold = on,
            b"i" => self.group.format.italic = on,
            b"ul" | b"uld" | b"uldash" | b"uldashd" | b"uldashdd" | b"uldb" | b"ulhwave" | b"ulldash" | b"ulth"
            | b"ulthd" | b"ulthdash" | b"ulthdashd" | b"ulthdashdd" | b"ulthldash" | b"ululdbwave" | b"ulw"
            | b"ulwave" => self.group.format.underline = on,
            b"ulnone" => self.group.format.underline = false,
            b"strike" | b"striked" => self.group.format.strike = on,
            b"super" | b"up" => self.group.format.vertical = if on { 1 } else { 0 },
            b"sub" | b"dn" => self.group.format.vertical = if on { 2 } else { 0 },
            b"nosupersub" => self.group.format.vertical = 0,
            b"v" => self.group.hidden = on,
            b"cf" => self.group.format.color = index,
            b"cb" | b"highlight" | b"chcbpat" => self.group.format.background = index,
            // Special characters.
            b"tab" => self.text("\t"),
            b"line" => self.text("\n"),
            b"emdash" => self.text("\u{2014}"),
            b"endash" => self.text("\u{2013}"),
            b"bullet" => self.text("\u{2022}"),
            b"lquote" => self.text("\u{2018}"),
            b"rquote" => self.text("\u{2019}"),
            b"ldblquote" => self.text("\u{201C}"),
            b"rdblquote" => self.text("\u{201D}"),
            b"emspace" | b"enspace" | b"qmspace" => self.text(" "),
            // The note's mark: a reference in the body; in the note itself, nothing (the list
            // of notes numbers them).
            b"chftn" if self.group.dest == Dest::Body && !self.group.hidden => {
                let n = self.footnotes.len() + 1;
                if self.referenced < n {
                    self.paragraph.push_note(n);
                    self.referenced = n;
                }
            }
            // Paragraphs and tables.
            b"par" | b"sect" | b"page" => {
                if matches!(self.group.dest, Dest::Body | Dest::Footnote) {
                    self.end_paragraph();
                }
            }
            // A `\listtext` group resets its own formatting, not the paragraph's.
            b"pard" if self.group.dest != Dest::ListText => {
                self.paragraph.in_table = false;
                self.paragraph.outline = None;
                self.paragraph.style = None;
                self.paragraph.list = false;
                self.paragraph.level = 0;
            }
            b"ls" if self.group.dest == Dest::Body => self.paragraph.list = number > 0,
            b"ilvl" if self.group.dest == Dest::Body => self.paragraph.level = number.clamp(0, 8) as u8,
            // Old-style numbering (`{\*\pn …}`, read although the group is skipped).
            b"pnlvlblt" | b"pnlvlbody" | b"pnlvlcont" => {
                self.paragraph.list = true;
                self.paragraph.level = 0;
            }
            b"pnlvl" => {
                self.paragraph.list = true;
                self.paragraph.level = (number.clamp(1, 9) - 1) as u8;
            }
            b"intbl" => self.paragraph.in_table = true,
            b"itap" => self.paragraph.in_table = number > 0,
            b"outlinelevel" if self.group.dest == Dest::StyleSheet => {
                self.style.outline = u8::try_from(number).ok().filter(|l| *l < 9);
            }
            b"outlinelevel" => self.paragraph.outline = u8::try_from(number).ok().filter(|l| *l < 9),
            b"s" if self.group.dest == Dest::StyleSheet => self.style.number = param,
            b"s" if self.group.dest == Dest::Body => self.paragraph.style = self.styles.get(&number).copied(),
            b"cell" if self.group.dest == Dest::Body => self.end_cell(),
            b"nestcell" if self.group.dest == Dest::Body => {
                self.paragraph.in_table = true;
                self.end_paragraph();
            }
            b"row" if self.group.dest == Dest::Body => self.end_row(),
            _ => {}
        }
        if self.group.dest == Dest::ColorTable && name == b"colortbl" {
            self.colors.clear();
        }
    }
}
