import { describe, expect, it } from 'vitest';
import { checkSheetLayout, defaultSheetLayout, type SheetLayout } from './layout.ts';

const letter30: SheetLayout = {
  paper: 'letter',
  columns: 3,
  rows: 10,
  labelWidthMm: 66.7,
  labelHeightMm: 25.4,
  marginTopMm: 12.7,
  marginLeftMm: 4.8,
  gapXMm: 3.2,
  gapYMm: 0,
};

describe('checkSheetLayout', () => {
  it('accepts the default A4 3 x 8 sheet and a US Letter 3 x 10 sheet', () => {
    expect(checkSheetLayout(defaultSheetLayout)).toBeNull();
    expect(defaultSheetLayout).toMatchObject({ paper: 'a4', columns: 3, rows: 8 });
    expect(checkSheetLayout(letter30)).toBeNull();
  });

  it('names the field of a layout that fits no label on the page', () => {
    const cases: [Partial<SheetLayout>, string][] = [
      [{ columns: 4 }, 'layout.columns'],
      [{ rows: 9 }, 'layout.rows'],
      [{ columns: 0 }, 'layout.columns'],
      [{ rows: 2.5 }, 'layout.rows'],
      [{ labelWidthMm: 220 }, 'layout.label_width_mm'],
      [{ labelHeightMm: 300 }, 'layout.label_height_mm'],
      [{ labelWidthMm: 10 }, 'layout.label_width_mm'],
      [{ marginLeftMm: 210 }, 'layout.margin_left_mm'],
      [{ marginTopMm: 297 }, 'layout.margin_top_mm'],
      [{ marginTopMm: 290 }, 'layout.label_height_mm'],
      [{ gapXMm: -1 }, 'layout.gap_x_mm'],
      [{ gapYMm: Number.NaN }, 'layout.gap_y_mm'],
      [{ gapYMm: 2 }, 'layout.rows'],
      [{ paper: 'a3' as never }, 'layout.paper'],
    ];
    for (const [change, field] of cases) {
      expect(checkSheetLayout({ ...defaultSheetLayout, ...change })?.field, JSON.stringify(change)).toBe(field);
    }
  });

  it('fits the A4 grid on A4 but not on the shorter US Letter page', () => {
    expect(checkSheetLayout({ ...defaultSheetLayout, paper: 'letter' })).toEqual({
      field: 'layout.rows',
      message: '8 rows overrun the 215.9 x 279.4 mm page (296.0 mm)',
    });
  });
});
