/** Rich content on results (withContent / contentOf): kept next to the plain output a model reads. */
import { contentOf, success, withContent } from '../../src';

describe('withContent', () => {
  it('keeps the output for models and the content for hosts that show it', () => {
    const result = withContent({ pixels: 1 }, [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }], { source: 'cam' });
    expect(result).toEqual({
      output: '{"pixels":1}',
      isError: false,
      metadata: { source: 'cam', content: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }] },
    });
    expect(contentOf(result)).toEqual([{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }]);
  });

  it('finds no content on plain results or on malformed content', () => {
    expect(contentOf(success('x'))).toBeUndefined();
    expect(contentOf(success('x', { content: [{ type: 'image', data: 1 }] }))).toBeUndefined();
    expect(contentOf(success('x', { content: [{ type: 'resource', resource: { uri: 'a:b' } }] }))).toBeUndefined();
    expect(contentOf(success('x', { content: [{ type: 'resource', resource: { uri: 'a:b', blob: 'AA==' } }] }))).toHaveLength(1);
  });
});
