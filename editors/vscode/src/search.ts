// Full-text search across every session (issue 26; server/PROTOCOL.md, "Full-text search"):
// "Transcript: Search All Sessions…" is a quick pick asked again as you type
// (`transcript/search`); a pick opens the hit's view at its turn (the verbose view for text the
// quiet view hides) and selects the first match after the turn's heading.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';

export interface Host {
  client(): LanguageClient | undefined;
  /** Opens the rendered view of a transcript file, verbose or not, titled by `title`. */
  openView(uri: vscode.Uri, verbose: boolean | undefined, title?: string): Promise<void>;
  log(msg: string): void;
}

/** One hit of `transcript/search`. */
export interface Hit {
  uri: string;
  viewUri: string;
  title: string;
  agent: string;
  project: string | null;
  turn: number;
  turnTitle: string;
  line: number;
  kind: string;
  snippet: { text: string; matches: [number, number][] };
  time: string | null;
}

interface Item extends vscode.QuickPickItem {
  hit: Hit;
}

/** An icon per kind of text. */
const ICON: Record<string, string> = {
  prompt: '$(account)',
  answer: '$(check)',
  comment: '$(comment)',
  'tool-input': '$(tools)',
  'tool-result': '$(output)',
};

/** Pause after a keystroke before asking the server (ms). */
const DEBOUNCE_MS = 120;

export function register(ctx: vscode.ExtensionContext, host: Host): void {
  ctx.subscriptions.push(vscode.commands.registerCommand('transcript-ls.searchSessions', (query?: string) => searchSessions(host, query)));
}

/** The snippet with its matches between ‹ and › (match ranges are UTF-16 code units). */
export function marked(s: Hit['snippet']): string {
  let out = '';
  let at = 0;
  for (const [a, b] of s.matches) {
    out += s.text.slice(at, a) + '‹' + s.text.slice(a, b) + '›';
    at = b;
  }
  return out + s.text.slice(at);
}

async function searchSessions(host: Host, initial?: string): Promise<void> {
  const c = host.client();
  if (!c) {
    void vscode.window.showWarningMessage('Transcript LS: the server is not running.');
    return;
  }
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = 'Search All Sessions';
  qp.placeholder = 'Words, "a phrase" — prompts, answers, comments, tool calls and results of every session';
  qp.matchOnDescription = false;
  qp.matchOnDetail = false;
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  const ask = async (value: string) => {
    const mine = ++seq;
    if (!value.trim()) {
      qp.items = [];
      qp.busy = false;
      return;
    }
    qp.busy = true;
    try {
      const r: { hits: Hit[]; complete: boolean } = await c.sendRequest('transcript/search', { query: value, limit: 50 });
      if (mine !== seq) {
        return; // a newer query is under way
      }
      qp.items = r.hits.map((h) => ({
        // The label names the place: it never holds the words searched for, so the quick
        // pick's own label matching keeps the server's order.
        label: `${ICON[h.kind] ?? ''} ${h.kind} · turn ${h.turn}`,
        description: marked(h.snippet),
        detail: `${h.title} · ${h.agent}${h.time ? ' · ' + new Date(h.time).toLocaleString() : ''}`,
        alwaysShow: true,
        hit: h,
      }));
      qp.title = r.complete ? `Search All Sessions (${r.hits.length})` : `Search All Sessions (${r.hits.length}, still indexing: partial)`;
    } catch (e) {
      host.log(`transcript/search failed: ${e instanceof Error ? e.message : e}`);
      if (mine === seq) {
        qp.items = [];
      }
    } finally {
      if (mine === seq) {
        qp.busy = false;
      }
    }
  };
  qp.onDidChangeValue((v) => {
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => void ask(v), DEBOUNCE_MS);
  });
  qp.onDidAccept(async () => {
    const pick = qp.selectedItems[0];
    qp.hide();
    if (pick) {
      await openHit(host, pick.hit);
    }
  });
  qp.onDidHide(() => qp.dispose());
  if (initial) {
    qp.value = initial;
    void ask(initial);
  }
  qp.show();
}

/** Opens a hit: its view (verbose when the quiet view hides the text) at the turn's heading,
 * then selects the first match after it (the first marked words of the snippet). */
export async function openHit(host: Host, hit: Hit): Promise<void> {
  const c = host.client();
  if (!c) {
    return;
  }
  const verbose = /[?&]verbose=1/.test(hit.viewUri);
  try {
    const opened: any = await c.sendRequest(ExecuteCommandRequest.type, {
      command: 'transcript.openView',
      arguments: [{ uri: hit.uri, turn: hit.turn, verbose }],
    });
    await host.openView(vscode.Uri.parse(hit.uri), verbose, hit.title);
    const ed = vscode.window.activeTextEditor;
    if (!ed) {
      return;
    }
    const heading = typeof opened?.line === 'number' ? opened.line : 0;
    const [a, b] = hit.snippet.matches[0] ?? [0, 0];
    const want = hit.snippet.text.slice(a, b).toLocaleLowerCase();
    // The match with what follows it in the snippet, to find the hit's own text first (the
    // prompt may hold the same word as the answer).
    const context = (want + hit.snippet.text.slice(b, b + 24).split('…')[0].toLocaleLowerCase()).trimEnd();
    const doc = ed.document;
    let range = new vscode.Range(heading, 0, heading, 0);
    const find = (needle: string): vscode.Range | undefined => {
      for (let l = heading; needle && l < doc.lineCount; l++) {
        const text = doc.lineAt(l).text;
        if (l > heading && /^## Turn /.test(text)) {
          break; // the next turn
        }
        const i = text.toLocaleLowerCase().indexOf(needle);
        if (i >= 0) {
          return new vscode.Range(l, i, l, i + want.length);
        }
      }
      return undefined;
    };
    range = find(context) ?? find(want) ?? range;
    ed.selection = new vscode.Selection(range.start, range.end);
    ed.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  } catch (e) {
    void vscode.window.showErrorMessage(`Transcript: cannot open turn ${hit.turn}: ${e instanceof Error ? e.message : e}`);
  }
}
