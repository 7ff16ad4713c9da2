// Links that ask another tab for the text model (src=text) open the Text tab (app/state.ts,
// textModelLink): the issue's `view=decode&src=text` link generates there; other links are
// decoded as before.
import { describe, it, expect } from 'vitest';
import { decodeHash, textModelLink } from '../../web/src/app/state';

describe('src=text links', () => {
  it('view=decode&src=text opens the Text tab and continues the text with the link’s settings', () => {
    const d = decodeHash('#v=1&view=decode&src=text&text=The%20Union&dlen=20&temp=0.8&sseed=7');
    expect(d.state.page.view).toBe('text');
    expect(d.state.text.tgen).toBe(true);
    expect(d.state.text.text).toBe('The Union');
    expect([d.state.text.dlen, d.state.text.temp, d.state.text.sseed]).toEqual([20, 0.8, 7]);
    expect(d.notices[0]).toMatch(/^src=text: the model trained on real text is shown in the Text tab, so the decode view opens there and continues your text/);
  });

  it('an attention view with src=text opens the Text tab without generating; tgen=0 is kept', () => {
    const d = decodeHash('#v=1&view=heads&src=text&text=abc&ckpt=100');
    expect(d.state.page.view).toBe('text');
    expect(d.state.text.tgen).toBe(false);
    expect(d.state.text.ckpt).toBe(100);
    expect(d.notices[0]).toMatch(/so the heads view opens there\.$/);
    expect(decodeHash('#v=1&view=decode&src=text&tgen=0').state.text.tgen).toBe(false);
  });

  it('view=text&src=text says nothing; other links are unchanged', () => {
    const d = decodeHash('#v=1&view=text&src=text&text=abc');
    expect(d.state.page.view).toBe('text');
    expect(d.notices).toEqual([]);
    for (const h of ['#v=1&view=heads&src=random', '#v=1&view=decode', '', '#v=1&tokens=src+text'])
      expect(textModelLink(h)).toEqual({ hash: h, notice: null });
    expect(decodeHash('#v=1&view=heads&src=random').state.page.view).toBe('heads');
  });
});
