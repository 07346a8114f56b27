// @detectXSS (CRS 941100/941101): a clean-room take on libinjection's XSS detection,
// driven by the HTML5 tokenizer in ./html5. The input is tokenized as if it landed in
// several places of a page (in text, and inside an unquoted, single-, double- or
// back-tick-quoted attribute value); it is XSS when, in any of them, a token is
// dangerous: a doctype, a black-listed tag, an event-handler or other black-listed
// attribute, a URL attribute whose value uses a script-capable scheme, a style
// attribute with a value, or a comment of the kinds browsers execute or parse specially.
//
// Input is a "binary string": one char per byte (code units 0..255). Pure: no I/O.

import { HTML5_START_STATES, scanHtml5, type Html5StartState, type Html5TokenType } from './html5';

/** Tags that run script, load content or change how the rest of the page is read. */
const BLACK_TAGS = new Set([
  'applet',
  'base',
  'comment',
  'embed',
  'frame',
  'frameset',
  'handler',
  'iframe',
  'import',
  'isindex',
  'link',
  'listener',
  'meta',
  'noscript',
  'object',
  'script',
  'style',
  'vmlframe',
  'xml',
  'xss',
]);
/** Tag-name prefixes: SVG and XSL elements (svg, svg:svg, xsl:...). */
const BLACK_TAG_PREFIXES = ['svg', 'xsl'];

/** Event names; "on" + one of these is an event-handler attribute. */
const EVENTS = new Set(
  (
    'abort activate afterprint afterscriptexecute afterupdate animationcancel animationend ' +
    'animationiteration animationstart auxclick beforeactivate beforecopy beforecut ' +
    'beforedeactivate beforeeditfocus beforeinput beforepaste beforeprint beforescriptexecute ' +
    'beforetoggle beforeunload beforeupdate begin blur bounce cancel canplay canplaythrough ' +
    'cellchange change click close contextmenu controlselect copy cuechange cut ' +
    'dataavailable datasetchanged datasetcomplete dblclick deactivate devicemotion ' +
    'deviceorientation drag dragdrop dragend dragenter dragexit dragleave dragover dragstart ' +
    'drop durationchange emptied end ended error errorupdate filterchange finish focus ' +
    'focusin focusout formchange formdata forminput fullscreenchange fullscreenerror ' +
    'gotpointercapture hashchange help input invalid keydown keypress keyup languagechange ' +
    'layoutcomplete load loadeddata loadedmetadata loadend loadstart losecapture ' +
    'lostpointercapture mediacomplete mediaerror message messageerror mousedown mouseenter ' +
    'mouseleave mousemove mouseout mouseover mouseup mousewheel move moveend movestart ' +
    'mozfullscreenchange offline online orientationchange outofsync pagehide pageshow paste ' +
    'pause play playing pointercancel pointerdown pointerenter pointerleave pointermove ' +
    'pointerout pointerover pointerrawupdate pointerup popstate progress propertychange ' +
    'ratechange readystatechange redo rejectionhandled repeat reset resize resizeend ' +
    'resizestart resume reverse rowdelete rowenter rowexit rowinserted rowsdelete ' +
    'rowsinserted scroll scrollend search securitypolicyviolation seek seeked seeking select ' +
    'selectionchange selectstart show slotchange stalled start storage submit suspend ' +
    'syncrestored timeerror timeupdate toggle touchcancel touchend touchmove touchstart ' +
    'trackchange transitioncancel transitionend transitionrun transitionstart undo ' +
    'unhandledrejection unload urlflip visibilitychange volumechange waiting ' +
    'webkitanimationend webkitanimationiteration webkitanimationstart ' +
    'webkitmouseforcechanged webkitmouseforcedown webkitmouseforceup ' +
    'webkitmouseforcewillbegin webkitplaybacktargetavailabilitychanged ' +
    'webkittransitionend webkitwillrevealbottom wheel zoom'
  ).split(/\s+/),
);

type AttrKind = 'none' | 'black' | 'url' | 'style' | 'indirect';

/** Attributes by what their value can do. */
const ATTRS = new Map<string, AttrKind>([
  // data binding (IE): fetch and insert markup
  ['dataformatas', 'black'],
  ['datasrc', 'black'],
  ['datafld', 'black'],
  // the value is a URL
  ['action', 'url'],
  ['background', 'url'],
  ['by', 'url'],
  ['codebase', 'url'],
  ['data', 'url'],
  ['dynsrc', 'url'],
  ['folder', 'url'],
  ['formaction', 'url'],
  ['from', 'url'],
  ['href', 'url'],
  ['lowsrc', 'url'],
  ['poster', 'url'],
  ['src', 'url'],
  ['to', 'url'],
  ['values', 'url'],
  // the value is CSS
  ['style', 'style'],
  // the value names another attribute (SVG animation)
  ['attributename', 'indirect'],
]);

/** Lower case, NULs dropped: how names are compared ("scr\0ipt" is "script"). */
function normName(name: string): string {
  return name.replace(/\0/g, '').toLowerCase();
}

function classifyAttr(name: string): AttrKind {
  const a = normName(name);
  if (a.length > 2 && a.startsWith('on') && EVENTS.has(a.slice(2))) return 'black';
  // namespace declarations (<x:script xmlns:x=...>) and XLink references (<math><a xlink:href>)
  if (a.startsWith('xmlns') || a.startsWith('xlink')) return 'black';
  return ATTRS.get(a) ?? 'none';
}

function isBlackTag(name: string): boolean {
  const t = normName(name);
  return BLACK_TAGS.has(t) || BLACK_TAG_PREFIXES.some((p) => t.startsWith(p));
}

const NAMED_ENTITIES: Record<string, string> = {
  colon: ':',
  tab: '\t',
  newline: '\n',
  lpar: '(',
  rpar: ')',
  sol: '/',
  amp: '&',
};

/** Decodes character references (&#106; &#x6A &colon;), as a browser does in attribute values. */
function decodeEntities(v: string): string {
  if (!v.includes('&')) return v;
  return v.replace(/&(?:#[xX]([0-9a-fA-F]+)|#([0-9]+)|([a-zA-Z]+));?/g, (m, hex, dec, name) => {
    if (name !== undefined) return NAMED_ENTITIES[String(name).toLowerCase()] ?? m;
    const code = hex !== undefined ? parseInt(String(hex), 16) : parseInt(String(dec), 10);
    return code > 0 && code < 0x100 ? String.fromCharCode(code) : m;
  });
}

// "javascript" and "vbscript" without the colon: "javascript#..." and "javascript&colon;" too
const BLACK_SCHEMES = ['javascript', 'vbscript', 'livescript:', 'mocha:', 'data:', 'view-source:'];

/** A URL value with a scheme that runs script or carries inline content. */
function isBlackUrl(value: string): boolean {
  const v = decodeEntities(value)
    .replace(/^[\x00-\x20\x7f-\xff]+/, '') // leading blanks and control bytes are skipped
    .replace(/[\x00-\x1f]/g, '') // browsers drop tab/CR/LF in URLs; other controls, to be safe
    .toLowerCase();
  return BLACK_SCHEMES.some((scheme) => v.startsWith(scheme));
}

/** Comments that are not inert: IE conditional comments, XML processing, imports, entities. */
function isBlackComment(text: string): boolean {
  if (text.includes('`')) return true;
  const c = normName(text);
  return (
    c.startsWith('[if') ||
    c.startsWith('xml') ||
    c.startsWith('import') ||
    c.startsWith('entity')
  );
}

/**
 * Whether a tag or attribute name can be dangerous, from its first letter that is not NUL
 * (names compare lower-cased, NULs dropped): most names in a long hostile value (`<a <a …`)
 * are then judged without being cut out of it.
 */
function mayBeNamed(input: string, from: number, to: number, initials: string): boolean {
  let i = from;
  while (i < to && input.charCodeAt(i) === 0) i++;
  return i < to && initials.includes(input[i].toLowerCase());
}
const TAG_INITIALS = [...BLACK_TAGS, ...BLACK_TAG_PREFIXES].map((t) => t[0]).join('');
const ATTR_INITIALS = `ox${[...ATTRS.keys()].map((a) => a[0]).join('')}`;

/** Whether `input`, read from the given starting context, holds a dangerous token. */
export function isXssInContext(input: string, start: Html5StartState): boolean {
  let attr: AttrKind = 'none';
  let xss = false;
  scanHtml5(input, start, (type: Html5TokenType, from: number, to: number): boolean => {
    switch (type) {
      case 'DOCTYPE':
        return (xss = true);
      case 'TAG_NAME_OPEN':
        if (mayBeNamed(input, from, to, TAG_INITIALS) && isBlackTag(input.slice(from, to))) return (xss = true);
        attr = 'none';
        break;
      case 'ATTR_NAME':
        // A dangerous attribute counts only with a value (libinjection: TYPE_BLACK is
        // decided at the ATTR_VALUE token), so `<x onend=` at the end of input is not XSS.
        attr = mayBeNamed(input, from, to, ATTR_INITIALS) ? classifyAttr(input.slice(from, to)) : 'none';
        break;
      case 'ATTR_VALUE':
        if (attr === 'black' || attr === 'style') return (xss = true);
        if (attr === 'url' && isBlackUrl(input.slice(from, to))) return (xss = true);
        if (attr === 'indirect' && classifyAttr(input.slice(from, to)) !== 'none') return (xss = true);
        attr = 'none';
        break;
      case 'TAG_COMMENT':
        if (isBlackComment(input.slice(from, to))) return (xss = true);
        break;
      default:
        attr = 'none';
    }
    return false;
  });
  return xss;
}

/** @detectXSS: true when the input is a likely cross-site-scripting payload. */
export function detectXSS(input: string): boolean {
  // Every dangerous token needs a `<` (tags, doctypes, comments) or an attribute value,
  // which needs a `=`: without either, no context can find one (and most values have neither).
  if (input.indexOf('<') < 0 && input.indexOf('=') < 0) return false;
  return HTML5_START_STATES.some((start) => isXssInContext(input, start));
}
