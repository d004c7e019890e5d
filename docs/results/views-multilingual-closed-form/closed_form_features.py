"""The closed form (val_sweep.py's, ridge 0.1, d = 128, Lambda^1/2) over other features,
to compare with Adam on the same class (sgd_vs_closed_form.py): MODE=mean (mean of the
caption's word one-hots) or MODE=l2 (L2-normalised counts, no idf). Scored on val.
  MODE=mean python3 closed_form_features.py
"""
import sys, os, numpy as np
sys.argv=['x','4000','1','val']
src=open(os.path.join(os.path.dirname(os.path.abspath(__file__)),'val_sweep.py')).read().split("V=int(sys.argv[1])")[0]
exec(src)
mode=os.environ['MODE']
fm=lambda sents,voc,idf: features_as(mode,sents,voc,idf)
E={}
for lang in ['en','de']:
    tr=load('train',lang); voc=vocab(tr,4000)
    idf=idf_weights(tr,voc)
    mu,C,Cp=pair_moments([fm(c,voc,idf) for c in tr])
    H,ev=spectral_head(C,Cp,0.1); H,ev=H[:,:128],ev[:128]
    print(lang,'top eig',ev[:3],'sum lam^2',(ev**2).sum(),flush=True)
    te=load('val',lang); E[lang]=(fm(te[0],voc,idf)-mu)@H*np.sqrt(np.maximum(ev,0))
print(mode,'closed form val en-de',round(mknn(E['en'],E['de']),3))
