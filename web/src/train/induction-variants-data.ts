// placeholder until the run finishes
export interface VariantsRow {
  id: string;
  label: string;
  patch: Record<string, unknown>;
  at90: (number | null)[];
  prev0: number[];
  ind1: number[];
  finalAccuracy: number[];
  curve: [number, number][];
}
export const INDUCTION_VARIANTS: { steps: number; evalEvery: number; dataSeed: number; seeds: number[]; rows: VariantsRow[] } = {"steps":1000,"evalEvery":5,"dataSeed":0,"seeds":[0,1,2,3,4],"rows":[{"id":"softmax","label":"softmax (config A)","patch":{},"at90":[135,140,null,150,160],"prev0":[0.745,0.7,0.7,0.7,0.7],"ind1":[0.971,0.9,0.9,0.9,0.9],"finalAccuracy":[0.986,0.9,0.9,0.9,0.9],"curve":[[0,3.5],[500,1],[1000,0.05]]},{"id":"rope","label":"RoPE","patch":{"positional":"rope"},"at90":[200,null,null,null,null],"prev0":[0.9,0.7,0.7,0.7,0.7],"ind1":[0.98,0.9,0.9,0.9,0.9],"finalAccuracy":[0.99,0.9,0.9,0.9,0.9],"curve":[[0,3.5],[500,1],[1000,0.05]]}]};
